/**
 * PATCH /settings `target_users` (level 444, zerver/views/user_settings.py): whom an
 * administrator's bulk change reaches, and which settings it may not touch.
 */
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";

/** UserBaseSettings.SECURITY_SENSITIVE_USER_SETTINGS: the user's own choice only. */
export const SECURITY_SENSITIVE_USER_SETTINGS: ReadonlySet<string> = new Set([
  "allow_private_data_export",
  "email_address_visibility",
  "enable_digest_emails",
  "enable_login_emails",
  "enable_marketing_emails",
  "presence_enabled",
  "send_private_typing_notifications",
  "send_read_receipts",
  "send_stream_typing_notifications",
]);

export interface TargetUsers {
  user_ids?: number[];
  group_ids?: number[];
  skip_if_already_edited: boolean;
}

/**
 * The users of `user_ids` and the recursive members of `group_ids`: the groups first
 * (user_group_ids_to_user_groups), then the users (user_ids_to_users with deactivated users
 * and without bots, which settings do not apply to). Two statements whatever their number.
 */
export async function targetUserIds(
  db: Db,
  realmId: number,
  target: TargetUsers,
): Promise<number[]> {
  const userIds = [...new Set(target.user_ids ?? [])];
  const groupIds = [...new Set(target.group_ids ?? [])];
  if (userIds.length === 0 && groupIds.length === 0)
    throw new JsonableError("Either user_ids or group_ids must be provided.");
  const groups = await db.userGroup.findMany({
    where: { realmId, id: { in: groupIds } },
    select: { id: true },
  });
  const found = new Set(groups.map((g) => g.id));
  const missingGroup = groupIds.find((id) => !found.has(id));
  if (missingGroup !== undefined) throw new JsonableError(`Invalid user group ID: ${missingGroup}`);
  const rows = await db.$queryRaw<{ id: number; is_bot: boolean; listed: boolean }[]>`
    WITH RECURSIVE g(id) AS (
      SELECT unnest(${groupIds}::int[])
      UNION
      SELECT ggm.subgroup_id FROM group_group_membership ggm JOIN g ON ggm.supergroup_id = g.id
    ), members AS (
      SELECT m.user_profile_id AS id FROM user_group_membership m JOIN g ON m.user_group_id = g.id
      UNION SELECT unnest(${userIds}::int[])
    )
    SELECT u.id, u.is_bot, u.id = ANY(${userIds}::int[]) AS listed
    FROM user_profile u JOIN members ON members.id = u.id
    WHERE u.realm_id = ${realmId}::int`;
  const inRealm = new Set(rows.map((r) => r.id));
  const missingUser = userIds.find((id) => !inRealm.has(id));
  if (missingUser !== undefined) throw new JsonableError(`Invalid user ID: ${missingUser}`);
  return rows.filter((r) => !r.is_bot).map((r) => r.id);
}

/**
 * Of `userIds`, those who changed `setting` themselves at least once (a USER_SETTING_CHANGED
 * audit row acted by the user it modified): skip_if_already_edited leaves them out.
 */
export async function selfEditedUserIds(
  db: Db,
  userIds: number[],
  setting: string,
  eventType: number,
): Promise<Set<number>> {
  if (userIds.length === 0) return new Set();
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT DISTINCT modified_user_id AS id FROM realm_audit_log
    WHERE modified_user_id = ANY(${userIds}::int[]) AND event_type = ${eventType}::int
      AND acting_user_id = modified_user_id AND extra_data->>'property' = ${setting}`;
  return new Set(rows.map((r) => r.id));
}
