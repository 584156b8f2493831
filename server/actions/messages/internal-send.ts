/**
 * Messages the server sends itself (Zulip's internal_send_*_message): the notification bot's
 * notices after a topic move, message reports, a scheduled message's failure. They are checked
 * and rendered over the caller's transaction and written by doSendMessage in it, so a notice
 * commits (or rolls back) with the change it reports.
 */
import type { AppDeps } from "../../context.ts";
import type { Realm, UserProfile } from "../../db/index.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { clientIdFor } from "../../lib/clients.ts";
import {
  NOTIFICATION_BOT,
  NOTIFICATION_BOT_EMAIL,
  type InternalBotSpec,
} from "../../lib/users/internal-bots.ts";
import { checkMessageWith, doSendMessage, type MessageTarget } from "./messages.ts";

export { NOTIFICATION_BOT, NOTIFICATION_BOT_EMAIL };
const INTERNAL_CLIENT = "Internal";

/** The sender and client of the server's own messages in one organization. */
export interface InternalSender {
  bot: UserProfile;
  clientId: number;
}

/** The organization's notification bot and the Internal client. */
export function notificationBot(deps: Pick<AppDeps, "db">, realm: Realm): Promise<InternalSender> {
  return internalBot(deps, realm, NOTIFICATION_BOT);
}

/**
 * One of the organization's internal bots (lib/users/internal-bots.ts), found by its address,
 * with the Internal client. Every organization is created with them.
 */
export async function internalBot(
  deps: Pick<AppDeps, "db">,
  realm: Realm,
  spec: InternalBotSpec,
): Promise<InternalSender> {
  const bot = await deps.db.userProfile.findFirst({
    where: {
      realmId: realm.id,
      isBot: true,
      deliveryEmail: { equals: spec.email, mode: "insensitive" },
    },
  });
  if (!bot) throw new Error(`${realm.stringId || "The organization"} has no ${spec.fullName}`);
  return { bot, clientId: await clientIdFor(deps.db, INTERNAL_CLIENT) };
}

/** A message the server sends: who sends it, where, what, and in which organization. */
export interface InternalMessage {
  deps: Pick<AppDeps, "config" | "now"> & Partial<Pick<AppDeps, "db">>;
  realm: Realm;
  sender: InternalSender;
  target: MessageTarget;
  content: string;
  /** Recipients for whom it starts read (a notice about their own action). */
  readByUserIds?: ReadonlySet<number>;
}

/** Checks, renders and sends a message from the server inside the caller's unit of work. */
export async function internalSendMessage(
  { tx, events }: UnitOfWork,
  { deps, realm, sender, target, content, readByUserIds }: InternalMessage,
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
  return doSendMessage({ tx, events }, { ...request, readByUserIds });
}
