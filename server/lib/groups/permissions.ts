/**
 * The permission engine: whether a user holds a group setting. A user's groups — every group,
 * named or anonymous, they belong to directly or through subgroups — come from one recursive
 * query and are kept per process, per database client, for the most recently used users, so a
 * check costs no query once they are known. Entries are dropped through lib/caches.ts: a change
 * of memberships or group settings names `groups:<realm id>`, a change of a user `user:<id>`.
 */
import { Prisma, type Db, type UserProfile } from "../../db/index.ts";
import { perClientCache } from "../caches.ts";
import {
  CHANNEL_GROUP_SETTINGS,
  REALM_GROUP_SETTINGS,
  type ChannelSettingName,
  type GroupSetting,
  type RealmSettingName,
} from "./group-settings.ts";
import { isGuest } from "../users/users.ts";

/** Users whose groups are kept per process; the least recently used beyond this are dropped. */
const MAX_CACHED_USERS = 5000;

interface Membership {
  realmId: number;
  groupIds: ReadonlySet<number>;
}

interface Cache {
  /** By user id, in least-recently-used-first order (a hit moves its entry to the end). */
  users: Map<number, Membership>;
  /** See perClientCache. */
  generation: number;
}

const cacheFor = perClientCache<Cache>(
  () => ({ users: new Map(), generation: 0 }),
  (cache, kind, id) => {
    if (kind === "*") cache.users.clear();
    else if (kind === "user") cache.users.delete(id);
    // `users:<realm id>` (many users of an organization changed, e.g. roles) changes memberships too.
    else if (kind === "groups" || kind === "users") {
      for (const [userId, entry] of cache.users)
        if (entry.realmId === id) cache.users.delete(userId);
    }
  },
);

/**
 * The ids of every group the user belongs to, directly or through subgroups, in one statement;
 * the user's organization is read with them so that entries are dropped with the right realm.
 */
async function readMembership(db: Db, userId: number): Promise<Membership | null> {
  const rows = await db.$queryRaw<{ realm_id: number; group_ids: number[] }[]>`
    WITH RECURSIVE g(id) AS (
      SELECT user_group_id FROM user_group_membership WHERE user_profile_id = ${userId}::int
      UNION
      SELECT ggm.supergroup_id FROM group_group_membership ggm JOIN g ON ggm.subgroup_id = g.id
    )
    SELECT u.realm_id, ARRAY(SELECT id FROM g) AS group_ids FROM user_profile u WHERE u.id = ${userId}::int`;
  const row = rows[0];
  return row ? { realmId: row.realm_id, groupIds: new Set(row.group_ids.map(Number)) } : null;
}

/** Every group (named or anonymous) the user belongs to, directly or through subgroups. */
export async function userGroupIds(db: Db, user: { id: number }): Promise<ReadonlySet<number>> {
  const cache = cacheFor(db);
  const hit = cache?.users.get(user.id);
  if (cache && hit) {
    cache.users.delete(user.id);
    cache.users.set(user.id, hit);
    return hit.groupIds;
  }
  const generation = cache?.generation;
  const membership = await readMembership(db, user.id);
  if (!membership) return new Set();
  if (cache && cache.generation === generation) {
    cache.users.set(user.id, membership);
    if (cache.users.size > MAX_CACHED_USERS) cache.users.delete(cache.users.keys().next().value!);
  }
  return membership.groupIds;
}

/**
 * Whether the user is a member of the group, directly or through nested subgroups. The cache
 * files a user under the organization read with their groups, not the caller's `realmId`, so a
 * wrong one can never keep a stale entry past `groups:<realm id>`.
 */
export async function isUserInGroup(
  db: Db,
  user: { id: number; realmId: number },
  groupId: number,
): Promise<boolean> {
  return (await userGroupIds(db, user)).has(groupId);
}

type Asker = Pick<UserProfile, "id" | "realmId" | "role">;

/**
 * Whether the user holds `setting` on its holder (the realm, a channel or a named group row; only
 * the setting's field is read). As in Zulip's user_has_permission_for_group_setting, guests never
 * hold a setting that may not be `role:everyone`, whatever group holds it.
 */
export async function hasGroupPermission<S extends GroupSetting>(
  db: Db,
  user: Asker,
  setting: S,
  holder: Record<S["field"], number>,
): Promise<boolean> {
  if (!setting.allowEveryoneGroup && isGuest(user)) return false;
  return isUserInGroup(db, user, holder[setting.field as S["field"]]);
}

/** An organization permission: `can(db, user, realm, "can_mention_many_users_group")`. */
export function can<N extends RealmSettingName>(
  db: Db,
  user: Asker,
  realm: Record<(typeof REALM_GROUP_SETTINGS)[N]["field"], number>,
  setting: N,
): Promise<boolean> {
  return hasGroupPermission(db, user, REALM_GROUP_SETTINGS[setting], realm);
}

/** A channel permission: `canInChannel(db, user, stream, "can_send_message_group")`. */
export function canInChannel<N extends ChannelSettingName>(
  db: Db,
  user: Asker,
  stream: Record<(typeof CHANNEL_GROUP_SETTINGS)[N]["field"], number>,
  setting: N,
): Promise<boolean> {
  return hasGroupPermission(db, user, CHANNEL_GROUP_SETTINGS[setting], stream);
}

/**
 * The active users of the organization who belong to any of the given groups, directly or
 * through subgroups, in one statement (group mentions notify them).
 */
export async function groupMembers(
  db: Db,
  realmId: number,
  groupIds: number[],
): Promise<Set<number>> {
  if (groupIds.length === 0) return new Set();
  const rows = await db.$queryRaw<{ id: number }[]>`
    WITH RECURSIVE g(id) AS (
      SELECT id FROM user_group WHERE id = ANY(${groupIds}::int[]) AND realm_id = ${realmId}::int
      UNION
      SELECT ggm.subgroup_id FROM group_group_membership ggm JOIN g ON ggm.supergroup_id = g.id
    )
    SELECT DISTINCT m.user_profile_id AS id
    FROM user_group_membership m JOIN g ON m.user_group_id = g.id JOIN user_profile u ON u.id = m.user_profile_id
    WHERE u.is_active AND u.realm_id = ${realmId}::int`;
  return new Set(rows.map((r) => Number(r.id)));
}

/**
 * The engine's membership test as SQL, for a set-based read over many users: whether the user
 * whose id is `userId` (a column) belongs to group `groupId`, directly or through subgroups (the
 * recursion readMembership runs for one user).
 */
export function inGroupSql(userId: Prisma.Sql, groupId: number): Prisma.Sql {
  return Prisma.sql`EXISTS (
    WITH RECURSIVE gm(id) AS (
      SELECT user_group_id FROM user_group_membership WHERE user_profile_id = ${userId}
      UNION
      SELECT ggm.supergroup_id FROM group_group_membership ggm JOIN gm ON ggm.subgroup_id = gm.id)
    SELECT 1 FROM gm WHERE gm.id = ${groupId}::int)`;
}
