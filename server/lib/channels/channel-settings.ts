/**
 * What changing or archiving a channel reads and checks (zerver/lib/streams.py
 * access_stream_for_delete_or_update_requiring_metadata_access, can_access_stream_metadata_user_ids)
 * and the texts of Notification Bot's notices about it (zerver/actions/streams.py). Who may see
 * or administer a channel is lib/access/channels.ts's rule, never a second one.
 */
import type { Db, Realm, Stream, UserProfile } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { accessFacts, allows, canAdministerChannel } from "../access/channels.ts";
import { metadataAudience } from "./channels.ts";
import { silentMentionSyntax } from "../messages/message-links.ts";
import { userGroupIds } from "../groups/permissions.ts";
import { emptyTopicDisplayName } from "../messages/topics.ts";
import type { GroupSettingValue } from "../groups/user-groups.ts";
import { isRealmAdmin } from "../users/users.ts";

type Actor = Pick<UserProfile, "id" | "realmId" | "role">;

/** CannotAdministerChannelError. */
export class CannotAdministerChannelError extends JsonableError {
  constructor() {
    super("You do not have permission to administer this channel.");
  }
}

/** The channel as a change reads it: its row, whether the caller is subscribed, and the caller's groups. */
export interface ChannelForUpdate {
  stream: Stream;
  subscribed: boolean;
  groups: ReadonlySet<number>;
}

/**
 * access_stream_for_delete_or_update_requiring_metadata_access: archived channels included; an
 * administrator or a channel administrator passes; a user who may read the channel learns they
 * may not administer it; anyone else gets "Invalid channel ID", as for a channel that is not there.
 */
export async function accessChannelForUpdate(
  db: Db,
  user: Actor,
  streamId: number,
): Promise<ChannelForUpdate> {
  const invalid = () => new JsonableError("Invalid channel ID");
  const stream = await db.stream.findFirst({ where: { id: streamId, realmId: user.realmId } });
  if (!stream) throw invalid();
  const subscribed =
    (await db.subscription.count({
      where: { userProfileId: user.id, recipientId: stream.recipientId!, active: true },
    })) > 0;
  const groups = await userGroupIds(db, user);
  if (isRealmAdmin(user) || (await canAdministerChannel(db, user, stream)))
    return { stream, subscribed, groups };
  if (allows("CHANNEL_CONTENT", accessFacts(user, stream, subscribed, groups)))
    throw new CannotAdministerChannelError();
  throw invalid();
}

/** user_has_content_access for the caller of a change. */
export function hasContentAccessFor(user: Actor, channel: ChannelForUpdate): boolean {
  return allows(
    "CHANNEL_CONTENT",
    accessFacts(user, channel.stream, channel.subscribed, channel.groups),
  );
}

/** The active subscribers of a channel who are active users. */
export async function activeSubscriberIds(db: Db, stream: Pick<Stream, "recipientId">) {
  const rows = await db.subscription.findMany({
    where: { recipientId: stream.recipientId!, active: true, isUserActive: true },
    select: { userProfileId: true },
  });
  return rows.map((r) => r.userProfileId);
}

/**
 * can_access_stream_metadata_user_ids: the channel's subscribers and everyone else who may see
 * it (lib/channels/channels.ts metadataAudience, which follows the access rule).
 */
export async function metadataUserIds(db: Db, realmId: number, stream: Stream) {
  const audience = (await metadataAudience(db, realmId, [stream])).get(stream.id)!;
  for (const id of await activeSubscriberIds(db, stream)) audience.add(id);
  return audience;
}

/** get_stream_permission_policy_key's policy names (Stream.PERMISSION_POLICIES). */
export function permissionPolicyName(
  stream: Pick<Stream, "isWebPublic" | "inviteOnly" | "historyPublicToSubscribers">,
) {
  if (stream.isWebPublic) return "Web-public";
  if (!stream.inviteOnly) return "Public";
  return stream.historyPublicToSubscribers
    ? "Private, shared history"
    : "Private, protected history";
}

/** send_change_stream_permission_notification. */
export function permissionNotice(actor: UserProfile, oldPolicy: string, newPolicy: string) {
  return `${silentMentionSyntax(actor)} changed the [access permissions](/help/channel-permissions) for this channel from **${oldPolicy}** to **${newPolicy}**.`;
}

/** do_rename_stream's notice. */
export function renameNotice(actor: UserProfile, oldName: string, newName: string) {
  return `${silentMentionSyntax(actor)} renamed channel **${oldName}** to **${newName}**.`;
}

/** send_change_stream_description_notification. */
export function descriptionNotice(actor: UserProfile, oldText: string, newText: string) {
  const shown = (d: string) => (d === "" ? "*No description.*" : d);
  return (
    `${silentMentionSyntax(actor)} changed the description for this channel.\n\n` +
    `* **Old description:**\n\`\`\`\` quote\n${shown(oldText)}\n\`\`\`\`\n` +
    `* **New description:**\n\`\`\`\` quote\n${shown(newText)}\n\`\`\`\``
  );
}

/** Stream.MESSAGE_RETENTION_SPECIAL_VALUES_MAP's unlimited. */
export const RETAIN_FOREVER = -1;

/**
 * send_change_stream_message_retention_days_notification: the organization's policy stands in
 * for `null` (an organization without one keeps messages forever).
 */
export function retentionNotice(
  actor: UserProfile,
  realm: Pick<Realm, "messageRetentionDays">,
  oldDays: number | null,
  newDays: number | null,
) {
  const realmDays = realm.messageRetentionDays ?? RETAIN_FOREVER;
  const before = oldDays ?? realmDays;
  const after = newDays ?? realmDays;
  const period = (days: number) => (days === RETAIN_FOREVER ? "Forever" : `${days} days`);
  const summary =
    after === RETAIN_FOREVER
      ? "Messages in this channel will now be retained forever."
      : `Messages in this channel will now be automatically deleted ${after} days after they are sent.`;
  return (
    `${silentMentionSyntax(actor)} has changed the [message retention period](/help/message-retention-policy) for this channel:\n` +
    `* **Old retention period**: ${period(before)}\n` +
    `* **New retention period**: ${period(after)}\n\n${summary}`
  );
}

/** do_set_stream_property's topics_policy notice (TOPICS_POLICY_DISPLAY_NAME_MAP). */
export function topicsPolicyNotice(
  actor: UserProfile,
  realm: Pick<Realm, "emptyTopicDisplayName">,
  oldPolicy: string,
  newPolicy: string,
) {
  const empty = emptyTopicDisplayName(realm);
  const names: Record<string, string> = {
    inherit: "Automatic",
    allow_empty_topic: `*${empty}* topic allowed`,
    disable_empty_topic: `No *${empty}* topic`,
    empty_topic_only: `Only *${empty}* topic allowed`,
  };
  return `${silentMentionSyntax(actor)} changed the "Allow posting to the *general chat* topic?" setting from **${names[oldPolicy]}** to **${names[newPolicy]}**.`;
}

/**
 * get_users_string_with_permission: a named group as a silent group mention; an anonymous one as
 * its groups, then its users, each in id order.
 */
export async function whoHasPermission(db: Db, value: GroupSettingValue): Promise<string> {
  const groupIds = typeof value === "number" ? [value] : value.direct_subgroups;
  const groups = await db.namedUserGroup.findMany({
    where: { id: { in: groupIds } },
    select: { name: true },
    orderBy: { id: "asc" },
  });
  const users =
    typeof value === "number"
      ? []
      : await db.userProfile.findMany({
          where: { id: { in: value.direct_members } },
          select: { id: true, fullName: true },
          orderBy: { id: "asc" },
        });
  return [...groups.map((g) => `@_*${g.name}*`), ...users.map(silentMentionSyntax)].join(", ");
}

/** send_stream_posting_permission_update_notification. */
export function postingPermissionNotice(actor: UserProfile, before: string, after: string) {
  return (
    `${silentMentionSyntax(actor)} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n` +
    `* **Old**: ${before}\n* **New**: ${after}\n`
  );
}
