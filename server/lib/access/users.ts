/**
 * Which users a user may access (zerver/lib/users.py check_can_access_user,
 * get_accessible_user_ids, get_inaccessible_user_ids): the organization's
 * `can_access_all_users_group` (role:everyone or role:members only) lets everyone, or only
 * non-guests, access every user; a user outside it accesses themselves, bots, and the users they
 * share a conversation with (an active subscription to the same channel or direct-message group,
 * the other user's being active, or a direct message one sent the other). Written once as a formula, as channels.ts: the TypeScript
 * predicate and the SQL fragment over a `user_profile` row (the target) come from it, so they
 * cannot disagree (test/api/user-access-truth-table.test.ts tries every combination of facts).
 *
 * Zulip first asks whether the organization restricts access at all (the group is role:everyone)
 * and then whether the viewer is in the group. Only role:everyone and role:members are allowed
 * and every user is in role:everyone, so for a guest "the organization is open" is "the guest is
 * in the group", and for a non-guest access is granted either way: one fact, `inAllUsersGroup`.
 */
import { Prisma, type Db, type Realm, type UserProfile } from "../../db/index.ts";
import { can, inGroupSql } from "../groups/permissions.ts";
import { RecipientType } from "../recipients.ts";
import type { ApiUser } from "../schemas.ts";
import { JsonableError } from "../../errors.ts";
import { accessUserById, dummyEmail, isGuest, Role } from "../users/users.ts";
import { fakeEmailDomain } from "../realm/realm.ts";
import type { Config } from "../../config.ts";

type Sql = Prisma.Sql;

export interface UserAccessFacts {
  /** The target is the viewer. */
  self: boolean;
  /** The target is a bot: every user accesses bots. */
  targetBot: boolean;
  /** The viewer is not a guest (check_user_can_access_all_users). */
  viewerNonGuest: boolean;
  /** The viewer is in the organization's can_access_all_users_group. */
  inAllUsersGroup: boolean;
  /** Both have an active subscription to one channel (the target's user active). */
  sharesChannel: boolean;
  /** Both are in one direct-message group (a conversation of three or more). */
  sharesDirectMessageGroup: boolean;
  /** One sent the other a one-to-one direct message (Zulip reads the message table last). */
  exchangedDirectMessage: boolean;
}
type Fact = keyof UserAccessFacts;

/** The facts, in a fixed order. */
export const USER_FACTS: readonly Fact[] = [
  "self",
  "targetBot",
  "viewerNonGuest",
  "inAllUsersGroup",
  "sharesChannel",
  "sharesDirectMessageGroup",
  "exchangedDirectMessage",
];

/** The rule: a disjunction, in Zulip's order of checks. */
const USER_ACCESS: readonly Fact[] = USER_FACTS;

/** The TypeScript predicate. */
export function userAccessAllows(facts: UserAccessFacts): boolean {
  return USER_ACCESS.some((f) => facts[f]);
}

/** The facts of the viewer alone, which the SQL takes as constants. */
export interface ViewerAccess {
  id: number;
  /** The viewer's personal recipient (direct messages to them), null for none. */
  recipientId: number | null;
  nonGuest: boolean;
  inAllUsersGroup: boolean;
}

/** Whether the viewer accesses every user (check_user_can_access_all_users): then no row needs the rule. */
export const accessesAllUsers = (v: ViewerAccess) => v.nonGuest || v.inAllUsersGroup;

/** The viewer's facts: their role, and their groups from the permission engine's cache. */
export async function viewerAccess(
  db: Db,
  viewer: Pick<UserProfile, "id" | "realmId" | "role" | "recipientId">,
  realm: Pick<Realm, "canAccessAllUsersGroupId">,
): Promise<ViewerAccess> {
  const nonGuest = !isGuest(viewer);
  // A non-guest accesses everyone whatever the group: no need to read their groups.
  const inAllUsersGroup = nonGuest
    ? true
    : await can(db, viewer, realm, "can_access_all_users_group");
  return { id: viewer.id, recipientId: viewer.recipientId, nonGuest, inAllUsersGroup };
}

/**
 * The viewer's facts as SQL: constants for one known viewer (userAccessSql), or columns of a
 * `user_profile` row of viewers for many at once (guestAccessAmong).
 */
interface ViewerSql {
  id: Sql;
  recipientId: Sql;
  nonGuest: Sql;
  inAllUsersGroup: Sql;
}

/** Whether the target row `alias` and the viewer share an active subscription to a recipient of `type`. */
function sharesSql(viewerId: Sql, alias: string, type: number): Sql {
  return Prisma.sql`EXISTS (SELECT 1 FROM subscription ua_v
      JOIN recipient ua_r ON ua_r.id = ua_v.recipient_id AND ua_r.type = ${type}::int
      JOIN subscription ua_t ON ua_t.recipient_id = ua_v.recipient_id
    WHERE ua_v.user_profile_id = ${viewerId} AND ua_v.active
      AND ua_t.user_profile_id = ${Prisma.raw(alias)}.id AND ua_t.active AND ua_t.is_user_active)`;
}

/** The rule's disjunction over the target row `alias`, each fact in SQL. */
function ruleSql(viewer: ViewerSql, alias: string): Sql {
  const a = (column: string) => Prisma.raw(`${alias}.${column}`);
  const fact = (name: Fact): Sql => {
    switch (name) {
      case "self":
        return Prisma.sql`${a("id")} = ${viewer.id}`;
      case "targetBot":
        return a("is_bot");
      case "viewerNonGuest":
        return viewer.nonGuest;
      case "inAllUsersGroup":
        return viewer.inAllUsersGroup;
      case "sharesChannel":
        return sharesSql(viewer.id, alias, RecipientType.STREAM);
      case "sharesDirectMessageGroup":
        return sharesSql(viewer.id, alias, RecipientType.DIRECT_MESSAGE_GROUP);
      case "exchangedDirectMessage":
        // The message index (realm_id, sender_id, recipient_id) answers each side.
        return Prisma.sql`EXISTS (SELECT 1 FROM message ua_m WHERE ua_m.realm_id = ${a("realm_id")}
          AND ((ua_m.sender_id = ${a("id")} AND ua_m.recipient_id = ${viewer.recipientId})
            OR (ua_m.sender_id = ${viewer.id} AND ua_m.recipient_id = ${a("recipient_id")})))`;
    }
  };
  return Prisma.sql`(${Prisma.join(USER_ACCESS.map(fact), " OR ")})`;
}

const constant = (value: boolean) => Prisma.raw(value ? "TRUE" : "FALSE");

/**
 * The rule's SQL fragment over the target row `alias` (a `user_profile` alias) for a known
 * viewer: the viewer's facts become constants, so for anyone who accesses every user it is TRUE
 * and the database never looks at subscriptions; for a restricted guest, three EXISTS per row.
 */
export function userAccessSql(viewer: ViewerAccess, alias: string): Sql {
  if (accessesAllUsers(viewer)) return constant(true);
  return ruleSql(
    {
      id: Prisma.sql`${viewer.id}::int`,
      recipientId: Prisma.sql`${viewer.recipientId ?? 0}::int`,
      nonGuest: constant(viewer.nonGuest),
      inAllUsersGroup: constant(viewer.inAllUsersGroup),
    },
    alias,
  );
}

/**
 * For a change that can alter who shares a conversation with whom (subscriptions), the humans
 * each restricted guest among the people involved may access, in one statement. The people are
 * `userIds` and the active subscribers of `recipientIds`; a restricted guest is one outside the
 * organization's can_access_all_users_group (the engine's membership test, in SQL), so in an open
 * organization the statement finds no viewer and evaluates no rule.
 */
export async function guestAccessAmong(
  db: Db,
  realm: Pick<Realm, "id" | "canAccessAllUsersGroupId">,
  userIds: number[],
  recipientIds: number[],
): Promise<Map<number, Set<number>>> {
  const viewer: ViewerSql = {
    id: Prisma.raw("v.id"),
    recipientId: Prisma.raw("v.recipient_id"),
    nonGuest: constant(false),
    inAllUsersGroup: constant(false),
  };
  const rows = await db.$queryRaw<{ viewer: number; accessible: number[] }[]>`
    WITH people AS (
      SELECT unnest(${userIds}::int[]) AS id
      UNION SELECT s.user_profile_id FROM subscription s
      WHERE s.recipient_id = ANY (${recipientIds}::int[]) AND s.active AND s.is_user_active),
    v AS (SELECT u.id, u.recipient_id FROM user_profile u
          WHERE u.id IN (SELECT id FROM people) AND u.realm_id = ${realm.id}::int
            AND u.role = ${Role.GUEST}::int AND u.is_active
            AND NOT ${inGroupSql(Prisma.raw("u.id"), realm.canAccessAllUsersGroupId)})
    SELECT v.id AS viewer, ARRAY(
      SELECT t.id FROM user_profile t
      WHERE t.id IN (SELECT id FROM people) AND t.id <> v.id AND NOT t.is_bot AND ${ruleSql(viewer, "t")}) AS accessible
    FROM v`;
  return new Map(rows.map((r) => [r.viewer, new Set(r.accessible)]));
}

/** UserProfile.INACCESSIBLE_USER_NAME. */
export const INACCESSIBLE_USER_NAME = "Unknown user";
/** zerver/lib/avatar.py get_avatar_for_inaccessible_user. */
export const INACCESSIBLE_USER_AVATAR = "/static/images/unknown-user-avatar.png";

/**
 * What a user who may not access another is shown of them (get_data_for_inaccessible_user):
 * placeholder data whose only variable content is the user's id.
 */
export function inaccessibleUser(userId: number, fakeEmailDomain: string): ApiUser {
  return {
    email: dummyEmail(userId, fakeEmailDomain),
    user_id: userId,
    avatar_version: 1,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    role: Role.MEMBER,
    is_bot: false,
    full_name: INACCESSIBLE_USER_NAME,
    timezone: "",
    is_active: true,
    // Python's isoformat() of the epoch (no microseconds).
    date_joined: "1970-01-01T00:00:00+00:00",
    delivery_email: null,
    avatar_url: INACCESSIBLE_USER_AVATAR,
    profile_data: {},
    is_imported_stub: false,
  };
}

/** Whether the viewer may access one user (check_can_access_user): a statement only for a restricted viewer. */
export async function canAccessUser(
  db: Db,
  viewer: ViewerAccess,
  target: Pick<UserProfile, "id" | "isBot">,
): Promise<boolean> {
  // The facts known without the database decide first (the SQL would give the same).
  if (accessesAllUsers(viewer) || target.id === viewer.id || target.isBot) return true;
  const [row] = await db.$queryRaw<{ ok: boolean }[]>`
    SELECT ${userAccessSql(viewer, "u")} AS ok FROM user_profile u WHERE u.id = ${target.id}::int`;
  return row?.ok ?? false;
}

/**
 * Another user by id for reading (access_user_by_id with for_admin=False): access_user_common's
 * checks, then the user-access rule ("Insufficient permission", as Zulip's access_user_common).
 */
export async function accessUserForRead(
  db: Db,
  viewer: Pick<UserProfile, "id" | "realmId" | "role" | "recipientId">,
  realm: Pick<Realm, "canAccessAllUsersGroupId">,
  userId: number,
  options: { allowBots?: boolean; allowDeactivated?: boolean },
): Promise<UserProfile> {
  const target = await accessUserById(db, viewer, userId, { ...options, forAdmin: false });
  await checkAccessible(db, viewer, realm, target);
  return target;
}

/** The rule's refusal for a user already found (GET /users/{email}). */
export async function checkAccessible(
  db: Db,
  viewer: Pick<UserProfile, "id" | "realmId" | "role" | "recipientId">,
  realm: Pick<Realm, "canAccessAllUsersGroupId">,
  target: Pick<UserProfile, "id" | "isBot">,
): Promise<void> {
  if (!(await canAccessUser(db, await viewerAccess(db, viewer, realm), target)))
    throw new JsonableError("Insufficient permission");
}

/**
 * Users as a viewer sees them: rows realmUsers read with the rule's `accessible` column, the
 * inaccessible ones as Zulip's "Unknown user" placeholder, or left out (`omit`: register with the
 * `user_list_incomplete` capability). The fake email domain is read only when one is needed.
 */
export async function formatForViewer<R extends { id: number; accessible?: boolean }>(
  rows: R[],
  format: (row: R) => ApiUser,
  fakeDomain: () => Promise<string>,
  omit = false,
): Promise<ApiUser[]> {
  const hidden = rows.some((r) => r.accessible === false);
  const domain = hidden && !omit ? await fakeDomain() : "";
  return rows.flatMap((r) =>
    r.accessible !== false ? [format(r)] : omit ? [] : [inaccessibleUser(r.id, domain)],
  );
}

/**
 * Of `ids`, the users the viewer may not access (get_inaccessible_user_ids): no statement for a
 * viewer who accesses everyone, one for a restricted one.
 */
export async function inaccessibleUserIds(
  db: Db,
  viewer: ViewerAccess,
  ids: number[],
): Promise<Set<number>> {
  if (accessesAllUsers(viewer) || ids.length === 0) return new Set();
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT u.id FROM user_profile u
    WHERE u.id = ANY (${[...new Set(ids)]}::int[]) AND NOT ${userAccessSql(viewer, "u")}`;
  return new Set(rows.map((r) => r.id));
}

/**
 * What message dicts need to show the senders a viewer may not access as "Unknown user"
 * (lib/messages/message-dicts.ts): undefined, without a statement, for a viewer who accesses
 * everyone or when every sender is accessible.
 */
export async function hiddenSenders(
  db: Db,
  viewer: Pick<UserProfile, "id" | "realmId" | "role" | "recipientId">,
  realm: Pick<Realm, "id" | "stringId" | "canAccessAllUsersGroupId">,
  config: Pick<Config, "externalHost" | "fakeEmailDomain">,
  senderIds: number[],
): Promise<{ ids: Set<number>; fakeEmailDomain: string } | undefined> {
  const access = await viewerAccess(db, viewer, realm);
  const ids = await inaccessibleUserIds(db, access, senderIds);
  if (ids.size === 0) return undefined;
  return { ids, fakeEmailDomain: await fakeEmailDomain(db, realm, config) };
}

/**
 * The organization's active guests outside can_access_all_users_group (the engine's membership
 * test, in SQL), in one statement: none in an open organization.
 */
export async function restrictedGuestIds(
  db: Db,
  realm: Pick<Realm, "id" | "canAccessAllUsersGroupId">,
): Promise<Set<number>> {
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT u.id FROM user_profile u
    WHERE u.realm_id = ${realm.id}::int AND u.role = ${Role.GUEST}::int AND u.is_active
      AND NOT ${inGroupSql(Prisma.raw("u.id"), realm.canAccessAllUsersGroupId)}`;
  return new Set(rows.map((r) => r.id));
}
