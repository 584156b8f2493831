/**
 * Users as the API shows them: roles, email visibility (who may see a user's real address),
 * avatars and custom profile data (zerver/lib/users.py format_user_row,
 * can_access_delivery_email).
 */
import { createHash } from "node:crypto";
import { Prisma, type Db, type Realm, type UserProfile } from "../../db/index.ts";
import {
  JsonableError,
  OrganizationAdministratorRequiredError,
  OrganizationOwnerRequiredError,
} from "../../errors.ts";
import type { ApiUser } from "../schemas.ts";
import { isStorableId } from "../ids.ts";
import { isStorableText, unprintablePosition } from "../text.ts";

export const Role = {
  OWNER: 100,
  ADMINISTRATOR: 200,
  MODERATOR: 300,
  MEMBER: 400,
  GUEST: 600,
} as const;

/** email_address_visibility values (zerver/models/users.py). */
export const EmailVisibility = {
  EVERYONE: 1,
  MEMBERS: 2,
  ADMINS: 3,
  NOBODY: 4,
  MODERATORS: 5,
} as const;

export const isRealmAdmin = (u: Pick<UserProfile, "role">) => u.role <= Role.ADMINISTRATOR;
/**
 * require_realm_admin, for actions that other code than a request may call (a request's role is
 * checked before its parameters, from the spec's `x-zulip-requires-role`).
 */
export function requireRealmAdmin(user: Pick<UserProfile, "role">): void {
  if (!isRealmAdmin(user)) throw new OrganizationAdministratorRequiredError();
}
export const isModeratorOrAbove = (u: Pick<UserProfile, "role">) => u.role <= Role.MODERATOR;
export const isGuest = (u: Pick<UserProfile, "role">) => u.role === Role.GUEST;

/**
 * Ids of the organization's users whose API or real email is `email`, case-insensitively, through
 * the (realm_id, lower(…)) unique indexes.
 */
async function idsByEmail(
  db: Db,
  realmId: number,
  email: string,
): Promise<{ id: number; byApiEmail: boolean; byDeliveryEmail: boolean }[]> {
  if (!isStorableText(email)) return [];
  return db.$queryRaw`
    SELECT id, lower(email) = lower(${email}) AS "byApiEmail", lower(delivery_email) = lower(${email}) AS "byDeliveryEmail"
    FROM user_profile WHERE realm_id = ${realmId} AND (lower(email) = lower(${email}) OR lower(delivery_email) = lower(${email}))`;
}

export async function findUserByDeliveryEmail(db: Db, realmId: number, email: string) {
  const id = (await idsByEmail(db, realmId, email.trim())).find((r) => r.byDeliveryEmail)?.id;
  return id === undefined ? null : db.userProfile.findUnique({ where: { id } });
}

/**
 * findUserByDeliveryEmail for a login, whose time must not tell whether the account exists: an
 * unknown address runs the same second statement (for id 0, which no row has).
 */
export async function findUserForLogin(db: Db, realmId: number, email: string) {
  const id = (await idsByEmail(db, realmId, email.trim())).find((r) => r.byDeliveryEmail)?.id;
  return db.userProfile.findUnique({ where: { id: id ?? 0 } });
}

/**
 * Who may change a user's or bot's role from `from` to `to` (update_user_backend and
 * patch_bot_backend share it): only owners give or take the owner role, and only administrators
 * change any other.
 */
export function checkRoleChange(actor: Pick<UserProfile, "role">, from: number, to: number) {
  if ((to === Role.OWNER || from === Role.OWNER) && actor.role !== Role.OWNER)
    throw new OrganizationOwnerRequiredError();
  if (!isRealmAdmin(actor)) throw new OrganizationAdministratorRequiredError();
}

/** Whether `viewer` may see `target`'s real email address (Zulip's can_access_delivery_email). */
export function canSeeDeliveryEmail(
  viewer: Pick<UserProfile, "id" | "role">,
  target: Pick<UserProfile, "id" | "isBot" | "emailAddressVisibility">,
) {
  if (viewer.id === target.id || target.isBot) return true;
  switch (target.emailAddressVisibility) {
    case EmailVisibility.EVERYONE:
      return true;
    case EmailVisibility.MEMBERS:
      return !isGuest(viewer);
    case EmailVisibility.MODERATORS:
      return isModeratorOrAbove(viewer);
    case EmailVisibility.ADMINS:
      return isRealmAdmin(viewer);
    default:
      return false;
  }
}

/** Zulip's dummy API address for users whose real address is hidden. */
export function dummyEmail(userId: number, domain: string) {
  return `user${userId}@${domain}`;
}

/** The API email a user gets for their visibility setting (stored, as Zulip stores it). */
export function apiEmailFor(
  user: Pick<UserProfile, "id" | "deliveryEmail" | "isBot" | "emailAddressVisibility">,
  domain: string,
) {
  return user.isBot || user.emailAddressVisibility === EmailVisibility.EVERYONE
    ? user.deliveryEmail
    : dummyEmail(user.id, domain);
}

/** A Gravatar URL (zerver/lib/avatar_hash.py gravatar_hash): the avatar of source "G". */
export function gravatarUrl(email: string, avatarVersion: number, medium = false) {
  const hash = createHash("md5").update(email.toLowerCase()).digest("hex");
  // MEDIUM_AVATAR_SIZE: the medium avatar asks Gravatar for 500 pixels.
  const size = medium ? "&s=500" : "";
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon${size}&version=${avatarVersion}`;
}

/** What avatarUrl reads of a user. */
export type AvatarRow = Pick<
  UserProfile,
  "realmId" | "deliveryEmail" | "avatarSource" | "avatarVersion" | "avatarHash"
>;

/**
 * A user's avatar URL (Zulip's avatar_url): an uploaded one (source "U") at
 * `/user_avatars/<realm_id>/<avatar_hash>?version=N`, where avatar_hash is the stored file's
 * random name and `.png` (100×100; medium: `-medium` before it, 500×500; an upload older than
 * resizing kept its image's extension), else the Gravatar of the user's email address.
 */
export function avatarUrl(user: AvatarRow, medium = false): string {
  if (user.avatarSource === "U" && user.avatarHash) {
    const name = medium ? user.avatarHash.replace(/(\.[a-z]+)$/, "-medium$1") : user.avatarHash;
    return `/user_avatars/${user.realmId}/${name}?version=${user.avatarVersion}`;
  }
  return gravatarUrl(user.deliveryEmail, user.avatarVersion, medium);
}

/** Python's isoformat() with microseconds and +00:00, as Zulip writes date_joined. */
export function isoFormat(date: Date) {
  // Python's isoformat() of an aware datetime: microseconds when there are any, then the offset.
  // (Sliced, not matched: it runs for every user of a register.)
  const iso = date.toISOString();
  return date.getUTCMilliseconds() === 0
    ? `${iso.slice(0, -5)}+00:00`
    : `${iso.slice(0, -1)}000+00:00`;
}

export type ProfileData = Record<string, { value: string; rendered_value?: string | null }>;

export interface UserFormatOptions {
  clientGravatar: boolean;
  /** Custom profile values by user id, when they were requested. */
  profileData?: Map<number, ProfileData>;
}

/** What toApiUser reads of a user: the columns realmUsers selects. */
export type ApiUserRow = Pick<
  UserProfile,
  | "id"
  | "email"
  | "deliveryEmail"
  | "fullName"
  | "dateJoined"
  | "isActive"
  | "role"
  | "isBot"
  | "botType"
  | "botOwnerId"
  | "timezone"
  | "avatarVersion"
  | "avatarSource"
  | "avatarHash"
  | "realmId"
  | "isImportedStub"
  | "emailAddressVisibility"
>;

export function toApiUser(
  user: ApiUserRow,
  viewer: Pick<UserProfile, "id" | "role">,
  options: UserFormatOptions,
): ApiUser {
  const visible = canSeeDeliveryEmail(viewer, user);
  const api: ApiUser = {
    user_id: user.id,
    delivery_email: visible ? user.deliveryEmail : null,
    email: user.email,
    full_name: user.fullName,
    date_joined: isoFormat(user.dateJoined),
    is_active: user.isActive,
    is_owner: user.role === Role.OWNER,
    is_admin: isRealmAdmin(user),
    is_guest: isGuest(user),
    is_bot: user.isBot,
    role: user.role as ApiUser["role"],
    timezone: user.timezone,
    // client_gravatar: null only for a Gravatar the client can compute; never for an upload.
    avatar_url:
      options.clientGravatar && visible && user.avatarSource !== "U" ? null : avatarUrl(user),
    avatar_version: user.avatarVersion,
    is_imported_stub: user.isImportedStub,
  };
  // Zulip's format_user_row: bot fields for bots only.
  if (user.isBot) {
    api.bot_type = (user.botType ?? undefined) as ApiUser["bot_type"];
    api.bot_owner_id = user.botOwnerId ?? null;
  }
  if (options.profileData && !user.isBot) api.profile_data = options.profileData.get(user.id) ?? {};
  return api;
}

/** GET /users/me's extras in one statement: the newest message id the user has, and their custom profile data. */
export async function loadOwnUserExtras(
  db: Db,
  realmId: number,
  userId: number,
): Promise<{ maxMessageId: number; profileData: ProfileData }> {
  const [row] = await db.$queryRaw<
    {
      max_id: number | null;
      profile: { fieldId: number; value: string; renderedValue: string | null }[];
    }[]
  >`
    SELECT (SELECT max(message_id) FROM user_message WHERE user_profile_id = ${userId}) AS max_id,
           (SELECT COALESCE(json_agg(json_build_object('fieldId', v.field_id, 'value', v.value, 'renderedValue', v.rendered_value)), '[]')
              FROM custom_profile_field_value v JOIN custom_profile_field f ON f.id = v.field_id AND f.realm_id = ${realmId}
              WHERE v.user_profile_id = ${userId}) AS profile`;
  const profileData: ProfileData = {};
  for (const r of row!.profile)
    profileData[String(r.fieldId)] =
      r.renderedValue !== null
        ? { value: r.value, rendered_value: r.renderedValue }
        : { value: r.value };
  return { maxMessageId: row!.max_id ?? -1, profileData };
}

/**
 * GET /users/{email}: the API email (dummy or real) finds any user; a real address finds the
 * user only when the caller may see it, so hidden addresses cannot be probed.
 */
export async function accessUserByEmail(
  db: Db,
  realm: Pick<Realm, "id">,
  viewer: UserProfile,
  email: string,
  dummyDomain: string,
) {
  const dummy = email.toLowerCase().match(/^user(\d+)@(.+)$/);
  if (dummy && dummy[2] === dummyDomain.toLowerCase()) {
    const user = await db.userProfile.findFirst({
      where: { realmId: realm.id, id: Number(dummy[1]) },
    });
    if (user) return user;
  }
  const matches = await idsByEmail(db, realm.id, email);
  const users = matches.length
    ? await db.userProfile.findMany({ where: { id: { in: matches.map((m) => m.id) } } })
    : [];
  const byApiEmail = users.find((u) => matches.some((m) => m.id === u.id && m.byApiEmail));
  if (byApiEmail) return byApiEmail;
  const byDelivery = users.find((u) => matches.some((m) => m.id === u.id && m.byDeliveryEmail));
  if (byDelivery && canSeeDeliveryEmail(viewer, byDelivery)) return byDelivery;
  throw new JsonableError("No such user");
}

/** The ids of the organization's active users and bots (the audience of organization-wide events). */
export async function activeUserIds(db: Db, realmId: number): Promise<number[]> {
  return (
    await db.userProfile.findMany({ where: { realmId, isActive: true }, select: { id: true } })
  ).map((u) => u.id);
}

/**
 * The ids of the organization's active administrators and owners (Zulip's get_admin_users_and_bots,
 * or get_human_admin_users with `humans`): the audience of administrators' events.
 */
export async function activeAdminIds(
  db: Db,
  realmId: number,
  { humans = false }: { humans?: boolean } = {},
): Promise<number[]> {
  return (
    await db.userProfile.findMany({
      where: {
        realmId,
        isActive: true,
        role: { lte: Role.ADMINISTRATOR },
        ...(humans ? { isBot: false } : {}),
      },
      select: { id: true },
    })
  ).map((u) => u.id);
}

/** UserProfile.MAX_NAME_LENGTH / MIN_NAME_LENGTH. */
export const MAX_NAME_LENGTH = 100;
export const MIN_NAME_LENGTH = 2;

/** check_full_name (zerver/lib/users.py): stripped, 2 to 100 characters, none of `*` `` ` `` `\` `>` `"` `@` nor unprintable ones. */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if ([...name].length > MAX_NAME_LENGTH) throw new JsonableError("Name too long!");
  if ([...name].length < MIN_NAME_LENGTH) throw new JsonableError("Name too short!");
  if (/[*`\\>"@]/.test(name) || unprintablePosition(name) > 0)
    throw new JsonableError("Invalid characters in name!");
  // A name ending in `|15` would read as a mention's `name|id` syntax (checked before stripping, as Zulip does).
  if (/\|\d+$/.test(raw)) throw new JsonableError("Invalid format!");
  return name;
}

/** Python's casefold() closely enough for names: upper then lower folds ß, final sigma and the like. */
const foldName = (name: string) => name.normalize("NFKC").toUpperCase().toLowerCase();

/**
 * check_full_name with the organization's require_unique_names: no other user (deactivated ones
 * and bots included) may have the same name after NFKC normalization and case folding.
 */
export async function checkFullNameInRealm(
  db: Db,
  realm: Pick<Realm, "id" | "requireUniqueNames">,
  raw: string,
  exceptUserId: number | null,
): Promise<string> {
  const name = checkFullName(raw);
  if (realm.requireUniqueNames) {
    const others = await db.userProfile.findMany({
      where: { realmId: realm.id, ...(exceptUserId === null ? {} : { id: { not: exceptUserId } }) },
      select: { fullName: true },
    });
    const folded = foldName(name);
    if (others.some((u) => foldName(u.fullName) === folded))
      throw new JsonableError("Unique names required in this organization.");
  }
  return name;
}

/**
 * The organization's users by id, as toApiUser reads them: every one, deactivated ones and bots
 * included (GET /users), those of `ids`, or only the active ones (POST /register's realm_users).
 * With `profileData`, each row carries its custom profile values, read in the same statement;
 * with `accessible` (the user-access rule's fragment over `u`), whether the viewer may access it.
 * Raw SQL: Prisma's mapping of a thousand whole rows cost 35 ms of CPU per register.
 */
export function realmUsers(
  db: Db,
  realmId: number,
  which: {
    ids?: number[];
    activeOnly?: boolean;
    profileData?: boolean;
    accessible?: Prisma.Sql;
  } = {},
): Promise<(ApiUserRow & { profileData?: ProfileData; accessible?: boolean })[]> {
  // An id beyond PostgreSQL's integer names nobody (and must not reach the cast).
  const ids = which.ids
    ? Prisma.sql` AND id = ANY (${which.ids.filter(isStorableId)}::int[])`
    : Prisma.empty;
  const active = which.activeOnly ? Prisma.sql` AND is_active` : Prisma.empty;
  // Zulip's profile_data: {"<field id>": {value, rendered_value (text fields only)}}.
  const profile = which.profileData
    ? Prisma.sql`, (SELECT COALESCE(json_object_agg(v.field_id::text, CASE WHEN v.rendered_value IS NULL
                     THEN json_build_object('value', v.value)
                     ELSE json_build_object('value', v.value, 'rendered_value', v.rendered_value) END), '{}')
                   FROM custom_profile_field_value v WHERE v.user_profile_id = u.id) AS "profileData"`
    : Prisma.empty;
  // The user-access rule's fragment over `u` (lib/access/users.ts), as a column.
  const accessible = which.accessible
    ? Prisma.sql`, ${which.accessible} AS accessible`
    : Prisma.empty;
  return db.$queryRaw<(ApiUserRow & { profileData?: ProfileData; accessible?: boolean })[]>`
    SELECT id, email, delivery_email AS "deliveryEmail", full_name AS "fullName", date_joined AS "dateJoined",
           is_active AS "isActive", role, is_bot AS "isBot", bot_type AS "botType", bot_owner_id AS "botOwnerId",
           timezone, avatar_version AS "avatarVersion", avatar_source AS "avatarSource",
           avatar_hash AS "avatarHash", realm_id AS "realmId", is_imported_stub AS "isImportedStub",
           email_address_visibility AS "emailAddressVisibility"${profile}${accessible}
    FROM user_profile u WHERE realm_id = ${realmId}${ids}${active} ORDER BY id`;
}

/** The profile values realmUsers read with its rows, as toApiUser's `profileData`. */
export const profileDataOf = (rows: { id: number; profileData?: ProfileData }[]) =>
  new Map(rows.map((r) => [r.id, r.profileData ?? {}]));

/** An active user of the organization by id, or null. */
export async function findActiveUser(
  db: Db,
  realmId: number,
  userId: number,
): Promise<{ id: number } | null> {
  return isStorableId(userId)
    ? db.userProfile.findFirst({
        where: { id: userId, realmId, isActive: true },
        select: { id: true },
      })
    : null;
}

/** An active user of the organization by id, the whole row, or null. */
export async function findActiveUserProfile(
  db: Db,
  realmId: number,
  userId: number,
): Promise<UserProfile | null> {
  return isStorableId(userId)
    ? db.userProfile.findFirst({ where: { id: userId, realmId, isActive: true } })
    : null;
}

/** UserProfile.can_admin_user: administrators administer their organization's users, owners their bots. */
export function canAdminUser(
  actor: Pick<UserProfile, "id" | "role">,
  target: Pick<UserProfile, "botOwnerId">,
): boolean {
  return target.botOwnerId === actor.id || isRealmAdmin(actor);
}

/**
 * Another user of the organization by id, for an API operation (zerver/lib/users.py
 * access_user_by_id): "No such user" for an unknown id or, unless allowed, a bot; "User is
 * deactivated" unless allowed; with `forAdmin`, the caller must administer the target (an
 * administrator, or the owner of the bot).
 */
export async function accessUserById(
  db: Db,
  viewer: Pick<UserProfile, "id" | "realmId" | "role">,
  userId: number,
  options: { forAdmin: boolean; allowBots?: boolean; allowDeactivated?: boolean },
): Promise<UserProfile> {
  const target = isStorableId(userId)
    ? await db.userProfile.findFirst({ where: { id: userId, realmId: viewer.realmId } })
    : null;
  if (!target || (target.isBot && !options.allowBots)) throw new JsonableError("No such user");
  if (!target.isActive && !options.allowDeactivated) throw new JsonableError("User is deactivated");
  if (options.forAdmin && !canAdminUser(viewer, target))
    throw new JsonableError("Insufficient permission");
  return target;
}

/** The organization's active human owners (Realm.get_human_owner_users), counted. */
export async function humanOwnerCount(db: Db, realmId: number): Promise<number> {
  return db.userProfile.count({
    where: { realmId, isActive: true, isBot: false, role: Role.OWNER },
  });
}

/** check_last_owner (zerver/views/users.py): the user is the organization's only active human owner. */
export async function isLastOwner(
  db: Db,
  user: Pick<UserProfile, "realmId" | "role" | "isBot">,
): Promise<boolean> {
  return user.role === Role.OWNER && !user.isBot && (await humanOwnerCount(db, user.realmId)) === 1;
}

/**
 * The organization's active users and bots, as deactivate_user_own_backend counts them. Bots
 * without an owner (Notification Bot) are Zulip's system bots, which live outside the
 * organization there, so they do not count.
 */
export async function activeMemberCount(db: Db, realmId: number): Promise<number> {
  return db.userProfile.count({
    where: { realmId, isActive: true, NOT: { isBot: true, botOwnerId: null } },
  });
}

/** Zulip's require_member_or_admin: operations a guest may not call. */
export function requireMemberOrAdmin(user: Pick<UserProfile, "role">): void {
  if (isGuest(user)) throw new JsonableError("Not allowed for guest users");
}

/** The organization's active users and bots with their roles: the audience of organization-wide events whose form depends on the viewer's role. */
export function activeViewers(db: Db, realmId: number): Promise<{ id: number; role: number }[]> {
  return db.userProfile.findMany({
    where: { realmId, isActive: true },
    select: { id: true, role: true },
  });
}

/** Zulip's human_users_only decorator: operations a bot may not call. */
export function humanUsersOnly(user: Pick<UserProfile, "isBot">): void {
  if (user.isBot) throw new JsonableError("This endpoint does not accept bot requests.");
}
