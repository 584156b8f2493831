/**
 * The Drafts page (Zulip's `#drafts`, key `d`): every saved draft, newest first, with its
 * conversation, the start of its text and when it was last edited; "Restore" opens the
 * conversation with the draft in the compose box, "Delete" deletes it (here and on the server).
 */
import { t } from "../i18n.ts";
import type { Narrow } from "../narrow.ts";
import { openCompose } from "../state/compose.ts";
import { conversationLabel, deleteDraft, drafts, type LocalDraft } from "../state/drafts.ts";
import type { Conversation } from "../state/typing.ts";
import { go } from "../state/view.ts";
import { dayOf, timeOfDay } from "./format.ts";
import type { PageProps } from "./PageHost.tsx";
import { SavedRow } from "./SavedRow.tsx";
import "./Drafts.css";

const PREVIEW_CHARS = 300;

export function narrowOf(target: Conversation): Narrow {
  if (target.kind === "dm") return { kind: "dm", userIds: target.userIds };
  return target.topic
    ? { kind: "topic", streamId: target.streamId, topic: target.topic }
    : { kind: "channel", streamId: target.streamId };
}

/** Opens the draft's conversation; the compose box, readdressed by the view, restores the draft. */
function restore(d: LocalDraft) {
  go(d.target ? narrowOf(d.target) : { kind: "all" });
  openCompose(undefined);
}

export default function DraftsPage(_: PageProps) {
  const list = [...drafts.value.values()].sort((a, b) => b.timestamp - a.timestamp);
  return (
    <section class="page drafts-page" aria-label={t("Drafts")}>
      <h1>{t("Drafts")}</h1>
      <p class="page-note">
        {t("Drafts are saved as you type, and restored when you go back to their conversation.")}
      </p>
      {list.length === 0 ? (
        <p class="empty">{t("No drafts.")}</p>
      ) : (
        <ul class="saved-list" aria-label={t("Drafts")}>
          {list.map((d) => {
            const where = conversationLabel(d.target);
            return (
              <SavedRow
                key={d.id}
                where={where}
                timestamp={d.timestamp}
                when={`${dayOf(d.timestamp)} ${timeOfDay(d.timestamp)}`}
                reopen={{
                  text: t("Restore"),
                  label: t("Restore draft for {conversation}", { conversation: where }),
                  onClick: () => restore(d),
                }}
                remove={{
                  label: t("Delete draft for {conversation}", { conversation: where }),
                  onClick: () => deleteDraft(d.id),
                }}
              >
                <p class="preview">
                  {d.content.length > PREVIEW_CHARS
                    ? d.content.slice(0, PREVIEW_CHARS) + "…"
                    : d.content}
                </p>
              </SavedRow>
            );
          })}
        </ul>
      )}
    </section>
  );
}
