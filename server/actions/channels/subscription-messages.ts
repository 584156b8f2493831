/**
 * Who a subscription request names (bulk_principals_to_user_profiles) and Notification Bot's
 * direct messages to users someone else subscribed (send_messages_for_new_subscribers,
 * you_were_just_subscribed_message).
 */
import type { Stream, UserProfile } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { silentMentionSyntax } from "../../lib/messages/message-links.ts";
import { internalSendMessage, type InternalSender } from "../messages/internal-send.ts";

export type Principal = Pick<UserProfile, "id" | "email" | "isBot" | "fullName" | "botOwnerId">;

/** Who a subscription request subscribed, and who already was. */
export interface SubscriptionResult {
  /** [user id, channel id] pairs newly subscribed. */
  subscribed: [number, number][];
  /** [user id, channel id] pairs that already were. */
  alreadySubscribed: [number, number][];
}

/** Active users of the organization by ID or email, in one statement; any other is "No such user". */
export async function accessPrincipals(
  ctx: Pick<RequestContext, "db" | "realm">,
  principals: (number | string)[],
): Promise<Principal[]> {
  const ids = principals.filter((p): p is number => typeof p === "number");
  const emails = principals
    .filter((p): p is string => typeof p === "string")
    .map((e) => e.toLowerCase());
  if (ids.length === 0 && emails.length === 0) return [];
  const users = await ctx.db.userProfile.findMany({
    where: {
      realmId: ctx.realm.id,
      isActive: true,
      OR: [
        { id: { in: ids.filter((id) => Number.isInteger(id) && id > 0 && id < 2 ** 31) } },
        { email: { in: emails, mode: "insensitive" } },
        { deliveryEmail: { in: emails, mode: "insensitive" } },
      ],
    },
    select: {
      id: true,
      email: true,
      deliveryEmail: true,
      isBot: true,
      fullName: true,
      botOwnerId: true,
    },
  });
  for (const id of ids)
    if (!users.some((u) => u.id === id)) throw new JsonableError("No such user");
  for (const e of emails)
    if (!users.some((u) => u.email.toLowerCase() === e || u.deliveryEmail.toLowerCase() === e))
      throw new JsonableError("No such user");
  return users;
}

/**
 * Tells each human user whom the caller subscribed to channels that existed before this request
 * which channels they were added to, in a direct message from Notification Bot.
 */
export async function doSendNewSubscriptionMessages(
  { tx, events }: UnitOfWork,
  ctx: RequestContext,
  bot: InternalSender,
  users: Principal[],
  result: SubscriptionResult,
  created: Stream[],
  all: Pick<Stream, "id" | "name">[] = created,
) {
  const createdIds = new Set(created.map((s) => s.id));
  const names = new Map(all.map((s) => [s.id, s]));
  for (const user of users) {
    if (user.id === ctx.user.id || user.isBot) continue;
    const channels = result.subscribed
      .filter(([u, id]) => u === user.id && !createdIds.has(id))
      .map(([, id]) => names.get(id)!)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    if (channels.length === 0) continue;
    const actor = silentMentionSyntax(ctx.user);
    const content =
      channels.length === 1
        ? `${actor} subscribed you to #**${channels[0]!.name}**.`
        : `${actor} subscribed you to the following channels:\n\n${channels.map((s) => `* #**${s.name}**\n`).join("")}`;
    await internalSendMessage(
      { tx, events },
      {
        deps: ctx,
        realm: ctx.realm,
        sender: bot,
        target: { kind: "direct", userIds: [user.id] },
        content,
      },
    );
  }
}
