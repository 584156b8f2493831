/**
 * Bots as their owners and administrators see them (zerver/lib/users.py access_bot_by_id,
 * check_can_create_bot, check_bot_name_available; zerver/models/users.py bot_owner_user_ids;
 * zerver/actions/create_user.py created_bot_event, zerver/actions/users.py get_owned_bot_dicts).
 */
import { Prisma, type Db, type Realm, type UserProfile } from "../../db/index.ts";
import { JsonableError, OrganizationOwnerRequiredError } from "../../errors.ts";
import { isValidEmail } from "../email/addresses.ts";
import { isStorableId } from "../ids.ts";
import { can } from "../groups/permissions.ts";
import {
  activeAdminIds,
  avatarUrl,
  canAdminUser,
  isRealmAdmin,
  Role,
  type AvatarRow,
} from "./users.ts";
import { accessSql } from "../access/channels.ts";

/** UserProfile.bot_type. */
export const BotType = {
  GENERIC: 1,
  INCOMING_WEBHOOK: 2,
  OUTGOING_WEBHOOK: 3,
  EMBEDDED: 4,
} as const;

/** The bot fields events and lists show, with the names of its default channels. */
export interface BotRow {
  id: number;
  email: string;
  fullName: string;
  botType: number | null;
  isActive: boolean;
  apiKey: string;
  botOwnerId: number | null;
  deliveryEmail: string;
  avatarVersion: number;
  avatarSource: string;
  avatarHash: string | null;
  realmId: number;
  defaultAllStreams: boolean;
  defaultSendingStream: string | null;
  defaultEventsRegisterStream: string | null;
  /** The owner's API email. */
  ownerEmail: string | null;
}

function botRows(db: Db, where: Prisma.Sql): Promise<BotRow[]> {
  return db.$queryRaw<BotRow[]>`
    SELECT u.id, u.email, u.full_name AS "fullName", u.bot_type AS "botType", u.is_active AS "isActive",
           u.api_key AS "apiKey", u.bot_owner_id AS "botOwnerId", u.delivery_email AS "deliveryEmail",
           u.avatar_version AS "avatarVersion", u.avatar_source AS "avatarSource",
           u.avatar_hash AS "avatarHash", u.realm_id AS "realmId", u.default_all_streams AS "defaultAllStreams",
           ss.name AS "defaultSendingStream", es.name AS "defaultEventsRegisterStream", o.email AS "ownerEmail"
    FROM user_profile u
    LEFT JOIN user_profile o ON o.id = u.bot_owner_id
    LEFT JOIN stream ss ON ss.id = u.default_sending_stream_id
    LEFT JOIN stream es ON es.id = u.default_events_register_stream_id
    WHERE u.is_bot AND ${where} ORDER BY u.date_joined, u.id`;
}

/** One bot of the organization with its channel names (in the caller's transaction when given one). */
export async function botRow(db: Db, botId: number): Promise<BotRow> {
  return (await botRows(db, Prisma.sql`u.id = ${botId}`))[0]!;
}

/** GET /bots: the user's active bots, oldest first (get_bots_backend). */
export function ownActiveBots(db: Db, userId: number): Promise<BotRow[]> {
  return botRows(db, Prisma.sql`u.bot_owner_id = ${userId} AND u.is_active`);
}

/** Register's `realm_bots`: every bot of the organization for an administrator, else the user's own (get_owned_bot_dicts). */
export async function ownedBotDicts(db: Db, user: Pick<UserProfile, "id" | "realmId" | "role">) {
  const rows = await botRows(
    db,
    isRealmAdmin(user)
      ? Prisma.sql`u.realm_id = ${user.realmId}`
      : Prisma.sql`u.bot_owner_id = ${user.id}`,
  );
  return rows.map(botDict);
}

export const botAvatarUrl = (b: AvatarRow) => avatarUrl(b);

/**
 * created_bot_event's `bot`: since feature level 474 only what the user object lacks (no API
 * key, avatar, type, email, name, activity or owner; those come with `realm_user`).
 */
export function botDict(b: BotRow) {
  return {
    user_id: b.id,
    default_sending_stream: b.defaultSendingStream,
    default_events_register_stream: b.defaultEventsRegisterStream,
    default_all_public_streams: b.defaultAllStreams,
    // Outgoing webhook and embedded bots, which have services, are not offered.
    services: [] as unknown[],
  };
}

/**
 * bot_owner_user_ids: who hears of a bot's changes (`realm_bot` events). Its owner and the
 * organization's active human administrators, or only its owner when a default channel of the
 * bot is private (administrators may not see that channel). One statement for any number of bots.
 */
export async function botOwnerUserIds(
  db: Db,
  realmId: number,
  botIds: number[],
): Promise<Map<number, number[]>> {
  const rows = await db.$queryRaw<{ id: number; owner: number | null; private: boolean }[]>`
    SELECT u.id, u.bot_owner_id AS owner,
           EXISTS (SELECT 1 FROM stream s WHERE ${accessSql("CHANNEL_HIDES_BOT", null, "s")}
                   AND s.id IN (u.default_sending_stream_id, u.default_events_register_stream_id)) AS private
    FROM user_profile u WHERE u.id = ANY(${botIds}::int[])`;
  const admins = rows.some((r) => !r.private)
    ? await activeAdminIds(db, realmId, { humans: true })
    : [];
  return new Map(
    rows.map((r) => {
      const ids = new Set(r.private ? [] : admins);
      if (r.owner !== null) ids.add(r.owner);
      return [r.id, [...ids]];
    }),
  );
}

/** access_bot_by_id: "No such bot", "Insufficient permission"; a bot that may create users is only for owners. */
export async function accessBotById(
  db: Db,
  user: Pick<UserProfile, "id" | "realmId" | "role">,
  botId: number,
): Promise<UserProfile> {
  const target = isStorableId(botId)
    ? await db.userProfile.findFirst({ where: { id: botId, realmId: user.realmId } })
    : null;
  if (!target || !target.isBot) throw new JsonableError("No such bot");
  if (!canAdminUser(user, target)) throw new JsonableError("Insufficient permission");
  if (target.canCreateUsers && user.role !== Role.OWNER) throw new OrganizationOwnerRequiredError();
  return target;
}

/** patch_bot_backend's checks of a new owner: an active human of the organization. */
export async function checkNewBotOwner(
  db: Db,
  realmId: number,
  ownerId: number,
): Promise<UserProfile> {
  const owner = isStorableId(ownerId)
    ? await db.userProfile.findFirst({ where: { id: ownerId, realmId } })
    : null;
  if (!owner) throw new JsonableError("Failed to change owner, no such user");
  if (!owner.isActive) throw new JsonableError("Failed to change owner, user is deactivated");
  if (owner.isBot) throw new JsonableError("Failed to change owner, bots can't own other bots");
  return owner;
}

/** check_can_create_bot: any bot with can_create_bots_group, incoming webhook bots also with can_create_write_only_bots_group. */
export async function checkCanCreateBot(
  db: Db,
  user: Pick<UserProfile, "id" | "realmId" | "role">,
  realm: Realm,
  botType: number,
): Promise<void> {
  if (await can(db, user, realm, "can_create_bots_group")) return;
  if (
    botType === BotType.INCOMING_WEBHOOK &&
    (await can(db, user, realm, "can_create_write_only_bots_group"))
  )
    return;
  throw new JsonableError("Insufficient permission");
}

/**
 * check_bot_name_available: no active user of the organization may hold the name (a check against
 * accidents, as in Zulip; reactivation can still produce two).
 */
export async function checkBotNameAvailable(
  db: Db,
  realmId: number,
  fullName: string,
  isActivation: boolean,
): Promise<void> {
  const taken = await db.userProfile.findFirst({
    where: { realmId, fullName: fullName.trim(), isActive: true },
    select: { id: true },
  });
  if (!taken) return;
  throw new JsonableError(
    isActivation
      ? `There is already an active bot named "${fullName}" in this organization. To reactivate this bot, you must rename or deactivate the other one first.`
      : "Name is already in use.",
  );
}

/** Characters after which Python's email.headerregistry.Address quotes a local part (DOT_ATOM_ENDS). */
const QUOTE_TRIGGERS = /[()<>@,:;\\"[\] \t]/;

/**
 * The bot's address as add_bot_backend builds it, `<short_name>-bot@<bot domain>` through
 * Python's Address (quoting a local part with specials), or null when Django's validator would
 * refuse it ("Bad name or username").
 */
export function botEmail(shortName: string, domain: string): string | null {
  const local = `${shortName}-bot`;
  if (/[\r\n]/.test(local)) return null;
  const quoted = QUOTE_TRIGGERS.test(local)
    ? `"${local.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`
    : local;
  const email = `${quoted}@${domain}`;
  return email.length <= 254 && isValidEmail(email) ? email : null;
}
