/**
 * The web app, loaded by the entry (main.tsx) once the registration is sent: draws the screen at
 * once, starts the event loop on that registration (its state fills the sidebars), then the feed
 * loads the view the URL names. Keyboard shortcuts and presence reports start with it.
 */
import { render } from "preact";
import { signal } from "@preact/signals";
import "./styles.css";
import { installKeys } from "./keys.ts";
import "./ui/messageKeys.ts";
import { setQueueIdSource } from "./state/compose.ts";
import { queueId, startEvents } from "./state/events.ts";
import { startPresence } from "./state/presence.ts";
import { listFor } from "./state/messages.ts";
import { homePageFirst } from "./state/register.ts";
import { listenToHash, view } from "./state/view.ts";
import { App } from "./ui/App.tsx";
import { preloadPage } from "./ui/PageHost.tsx";
// Features' state, registered with the event loop (onRegister/onEvent) before it starts. Their
// pages load on demand (ui/PageHost.tsx); their state must be current from the first register.
import "./state/emoji.ts";
import "./state/settings.ts";
import "./state/theme.ts";
import "./state/groups.ts";
import "./state/permissions.ts";
import "./state/typeahead.ts";
import "./state/user-topics.ts";
import "./state/muted-users.ts";
import "./state/status.ts";
import "./state/notify.ts";
import "./state/people-keys.ts";
import "./state/org.ts";
import "./state/channels.ts";
import { goHome } from "./state/home.ts";
import { loadRecent } from "./state/recent.ts";
import "./state/drafts.ts";
import "./state/scheduled.ts";
import "./state/uploads.ts";

const ready = signal(false);
/** After the first screen's own fetches. */
const RECENT_PREFETCH_DELAY_MS = 1500;
const root = document.getElementById("app")!;

function Root() {
  return <App ready={ready.value} />;
}

listenToHash();
installKeys();
// Opened bare, the app shows the home view, the Inbox unless the register says otherwise: its
// chunk is fetched beside the registration rather than after it.
if (location.hash === "" || location.hash === "#" || location.hash.startsWith("#inbox"))
  void preloadPage("inbox").catch(() => {});
setQueueIdSource(() => queueId.value);
render(<Root />, root);
// The view's messages, fetched beside the registration (whose state fills the sidebars): this
// load takes the fetch main.tsx sent (state/register.ts), and the feed shows them without waiting
// for the registration. What was sent between that fetch and the queue's creation is fetched
// once the queue exists.
const v = view.value;
const first = listFor(v.narrow);
// When the home page comes first, All messages (the view behind it) is fetched once the
// registration has answered (state/register.ts homePageFirst).
let prefetch = homePageFirst() ? undefined : first.load(v.near ?? "first_unread");
startEvents(() => {
  ready.value = true;
  prefetch ??= first.load(v.near ?? "first_unread");
  // An empty fragment opens the user's home view (web_home_view), known from the register.
  if (location.hash === "" || location.hash === "#") goHome(true);
  // Presence's first report (its answer redraws the buddy list of 10,000 people) once the first
  // screen is painted: the register brought everyone's presence already.
  // (A hidden page paints no frame: it reports at once.)
  if (document.visibilityState === "visible")
    requestAnimationFrame(() => setTimeout(startPresence));
  else startPresence();
  void prefetch.then(() => first.catchUp());
  // Recent conversations' one bounded fetch, in the background once the first screen is drawn (as
  // Zulip's web app loads recent history at start-up): the view then opens without waiting.
  setTimeout(() => void loadRecent(), RECENT_PREFETCH_DELAY_MS);
});
