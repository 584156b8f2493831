/**
 * User statuses (zerver/lib/user_status.py): the text and emoji a user shows, and the legacy
 * `away` flag, which is not stored with them but is `!presence_enabled` of the user.
 */
import { Prisma, type Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { Schemas } from "../schemas.ts";
import { refuseNul } from "../text.ts";
import {
  canonicalReactionType,
  checkEmojiRequest,
  emojiDataForName,
  ReactionType,
} from "../realm/emoji.ts";

/** The longest status text, in code points, after stripping (Zulip's StringConstraints max_length). */
export const MAX_STATUS_TEXT_LENGTH = 60;

/** A status as clients see it: only the fields that are set (UserInfoDict). */
export type ApiUserStatus = Schemas["UserStatus"];

interface StatusRow {
  user_id: number;
  presence_enabled: boolean;
  status_text: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: ApiUserStatus["reaction_type"] & string;
}

/** format_user_status: `away` only when true, the text only when set, the emoji's three fields only with a name. */
function formatUserStatus(row: StatusRow): ApiUserStatus {
  const status: ApiUserStatus = {};
  if (!row.presence_enabled) status.away = true;
  if (row.status_text) status.status_text = row.status_text;
  if (row.emoji_name)
    Object.assign(status, {
      emoji_name: row.emoji_name,
      emoji_code: row.emoji_code,
      reaction_type: row.reaction_type,
    });
  return status;
}

function statusRows(db: Db, where: Prisma.Sql) {
  return db.$queryRaw<StatusRow[]>`
    SELECT s.user_profile_id AS user_id, u.presence_enabled, s.status_text, s.emoji_name, s.emoji_code, s.reaction_type
    FROM user_status s JOIN user_profile u ON u.id = s.user_profile_id
    WHERE ${where} ORDER BY s.user_profile_id`;
}

/**
 * Register's `user_status` (get_all_users_status_dict): by user id, the organization's active
 * users whose status says something, in one statement.
 */
export async function realmUserStatuses(
  db: Db,
  realmId: number,
): Promise<Record<string, ApiUserStatus>> {
  const rows = await statusRows(
    db,
    Prisma.sql`u.realm_id = ${realmId} AND u.is_active AND NOT (u.presence_enabled
      AND s.status_text = '' AND s.emoji_name = '' AND s.emoji_code = '' AND s.reaction_type = ${ReactionType.UNICODE})`,
  );
  return Object.fromEntries(rows.map((r) => [String(r.user_id), formatUserStatus(r)]));
}

/** One user's status (get_user_status): `{}` when they never set one. */
export async function userStatus(db: Db, userId: number): Promise<ApiUserStatus> {
  const [row] = await statusRows(db, Prisma.sql`s.user_profile_id = ${userId}`);
  return row ? formatUserStatus(row) : {};
}

/** A status change as sent: each field is left alone when undefined. */
export interface StatusRequest {
  away?: boolean;
  statusText?: string;
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

/** The checked change: the emoji's code and type are filled in whenever its name is given. */
export interface StatusChange {
  away?: boolean;
  statusText?: string;
  emoji?: { emojiName: string; emojiCode: string; reactionType: string };
}

/**
 * The stripped status text, refused past 60 code points (and with a NUL, which PostgreSQL cannot
 * store). Zulip checks it while parsing the request, before anything else the view does.
 */
export function checkStatusText(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if ([...text].length > MAX_STATUS_TEXT_LENGTH)
    throw new JsonableError(
      `status_text is too long (limit: ${MAX_STATUS_TEXT_LENGTH} characters)`,
    );
  return refuseNul(text, "status text");
}

/**
 * check_update_user_status: something must change; an empty emoji name clears the emoji; a
 * code or type needs a name; a name alone takes its code and type from the emoji it names.
 */
export async function checkUpdateUserStatus(
  db: Db,
  realmId: number,
  request: StatusRequest,
): Promise<StatusChange> {
  const { away, statusText, emojiName } = request;
  let { emojiCode, reactionType } = request;
  if (away === undefined && statusText === undefined && emojiName === undefined)
    throw new JsonableError("Client did not pass any new values.");
  if (emojiName === undefined) {
    if (emojiCode || reactionType)
      throw new JsonableError(
        "Client must pass emoji_name if they pass either emoji_code or reaction_type.",
      );
    return { away, statusText };
  }
  if (emojiName === "")
    return {
      away,
      statusText,
      emoji: { emojiName, emojiCode: "", reactionType: ReactionType.UNICODE },
    };
  if (emojiCode === undefined || reactionType === undefined) {
    const data = await emojiDataForName(db, realmId, emojiName);
    emojiCode ??= data.emojiCode;
    reactionType ??= data.reactionType;
  }
  await checkEmojiRequest(db, realmId, emojiName, emojiCode, reactionType);
  return {
    away,
    statusText,
    emoji: { emojiName, emojiCode, reactionType: canonicalReactionType(reactionType) },
  };
}
