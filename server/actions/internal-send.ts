/**
 * Messages the server sends itself (Zulip's internal_send_*_message): the notification bot's
 * notices after a topic move, message reports, a scheduled message's failure. They are checked
 * and rendered over the caller's transaction and written by doSendMessage in it, so a notice
 * commits (or rolls back) with the change it reports.
 */
import type { AppDeps } from "../context.ts";
import type { Realm, Tx, UserProfile } from "../db.ts";
import type { PendingEvents } from "../events/index.ts";
import { clientIdFor } from "../lib/clients.ts";
import { Role } from "../lib/users.ts";
import { checkMessageWith, doSendMessage, type MessageTarget } from "./messages.ts";
import { doCreateUser, type NewUser } from "./users.ts";
import { inTransaction } from "./transaction.ts";
import { fakeEmailDomain } from "../lib/realms.ts";

/** Zulip's settings.NOTIFICATION_BOT. */
export const NOTIFICATION_BOT_EMAIL = "notification-bot@zulip.com";
/** The notification bot as every organization has it (Zulip's create_users for internal bots). */
export const NOTIFICATION_BOT: NewUser = {
  email: NOTIFICATION_BOT_EMAIL,
  fullName: "Notification Bot",
  role: Role.MEMBER,
  isBot: true,
  botType: 1,
};
const INTERNAL_CLIENT = "Internal";

/** The sender and client of the server's own messages in one organization. */
export interface InternalSender {
  bot: UserProfile;
  clientId: number;
}

/**
 * The organization's notification bot (created with it by populate-db; created on first use in
 * an organization made otherwise) and the Internal client. Call before opening the transaction
 * that sends: both may be created, in statements of their own.
 */
export function notificationBot(
  deps: Pick<AppDeps, "db" | "config" | "events">,
  realm: Realm,
): Promise<InternalSender> {
  return internalBot(deps, realm, NOTIFICATION_BOT);
}

/**
 * One of the organization's internal bots (Zulip's REALM_INTERNAL_BOTS: Notification Bot,
 * Welcome Bot), found by its address or created on first use, with the Internal client.
 */
export async function internalBot(
  deps: Pick<AppDeps, "db" | "config" | "events">,
  realm: Realm,
  spec: NewUser,
): Promise<InternalSender> {
  const find = () =>
    deps.db.userProfile.findFirst({
      where: {
        realmId: realm.id,
        isBot: true,
        deliveryEmail: { equals: spec.email, mode: "insensitive" },
      },
    });
  let bot = await find();
  if (!bot) {
    const domain = await fakeEmailDomain(deps.db, realm, deps.config);
    try {
      bot = await inTransaction(deps, realm.id, (tx, events) =>
        doCreateUser(tx, realm, spec, domain, events),
      );
    } catch {
      bot = await find(); // another request created it first
      if (!bot) throw new Error(`Could not create ${spec.fullName}`);
    }
  }
  return { bot, clientId: await clientIdFor(deps.db, INTERNAL_CLIENT) };
}

/** Checks, renders and sends a message from the server inside the caller's transaction. */
export async function internalSendMessage(
  tx: Tx,
  events: PendingEvents,
  deps: Pick<AppDeps, "config" | "now"> & Partial<Pick<AppDeps, "db">>,
  realm: Realm,
  sender: InternalSender,
  target: MessageTarget,
  content: string,
  options: { readByUserIds?: ReadonlySet<number> } = {},
): Promise<{ id: number }> {
  const request = await checkMessageWith(
    {
      db: tx,
      cacheDb: deps.db,
      realm,
      user: sender.bot,
      config: deps.config,
      now: deps.now,
      internal: true,
    },
    { target, content, clientName: INTERNAL_CLIENT, readBySender: false },
    sender.clientId,
  );
  return doSendMessage(tx, events, { ...request, readByUserIds: options.readByUserIds });
}
