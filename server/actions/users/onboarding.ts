/**
 * Welcome Bot's first direct messages to a new user (zerver/lib/onboarding.py
 * send_initial_direct_message): Zulip's default welcome, starred for the user, then the
 * organization's or the invitation's custom text as a second message when there is one.
 */
import type { AppDeps } from "../../context.ts";
import type { Realm, UserProfile } from "../../db/index.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { FLAG_BITS } from "../../lib/messages/flags.ts";
import { isRealmAdmin } from "../../lib/users/users.ts";
import {
  internalBot,
  internalSendMessage,
  type InternalSender,
} from "../messages/internal-send.ts";
import { WELCOME_BOT } from "../../lib/users/internal-bots.ts";
import { fakeEmailDomain } from "../../lib/realm/realm.ts";
import { inTransaction } from "../transaction.ts";
import { doCreateUser } from "./users.ts";

/**
 * The organization's Welcome Bot. Organizations created by doCreateOrganization have it; one
 * populated otherwise gets it here on first use, in a transaction of its own (call before the
 * sending transaction).
 */
export async function welcomeBot(
  deps: Pick<AppDeps, "db" | "config" | "events">,
  realm: Realm,
): Promise<InternalSender> {
  try {
    return await internalBot(deps, realm, WELCOME_BOT);
  } catch {
    const domain = await fakeEmailDomain(deps.db, realm, deps.config);
    await inTransaction(deps, realm.id, ({ tx, events }) =>
      doCreateUser(tx, realm, WELCOME_BOT, domain, events),
    ).catch(() => undefined); // another request created it first: the read below finds it
    return internalBot(deps, realm, WELCOME_BOT);
  }
}

/** The commands Welcome Bot answers (onboarding.py bot_commands). */
const BOT_COMMANDS = [
  "apps",
  "profile",
  "theme",
  "channels",
  "topics",
  "message formatting",
  "keyboard shortcuts",
  "help",
];

/** send_initial_direct_message's text for a user of an organization at `realmUrl`. */
export function defaultWelcomeText(realmUrl: string, user: Pick<UserProfile, "role">): string {
  const base = realmUrl.replace(/\/$/, "");
  const setup = isRealmAdmin(user)
    ? ` We also have a guide for [Setting up your organization](${base}/help/getting-your-organization-started-with-zulip).`
    : "";
  return (
    "Hello, and welcome to Zulip!👋 This is a direct message from me, Welcome Bot.\n\n" +
    `If you are new to Zulip, check out our [Getting started guide](${base}/help/getting-started-with-zulip)!` +
    `${setup}\n\n` +
    "I can also help you get set up! Just click anywhere on this message or press `r` to reply.\n\n" +
    "Here are a few messages I understand: " +
    BOT_COMMANDS.map((c) => `\`${c}\``).join(", ") +
    "."
  );
}

/**
 * Sends the welcome (starred, as Zulip stars it) and, when `customText` is non-empty, the custom
 * message, in the caller's transaction. Returns the ids of the messages sent.
 */
export async function sendInitialDirectMessages(
  { tx, events }: UnitOfWork,
  deps: Pick<AppDeps, "config" | "now">,
  realm: Realm,
  sender: InternalSender,
  user: UserProfile,
  realmUrl: string,
  customText: string | null,
): Promise<number[]> {
  const to = { kind: "direct" as const, userIds: [user.id] };
  const welcome = await internalSendMessage(
    { tx, events },
    { deps, realm, sender, target: to, content: defaultWelcomeText(realmUrl, user) },
  );
  await tx.$executeRaw`
    UPDATE user_message SET flags = flags | ${FLAG_BITS.starred}
    WHERE user_profile_id = ${user.id} AND message_id = ${welcome.id}`;
  const ids = [welcome.id];
  if (customText && customText.trim() !== "")
    ids.push(
      (
        await internalSendMessage(
          { tx, events },
          { deps, realm, sender, target: to, content: customText },
        )
      ).id,
    );
  return ids;
}
