/**
 * What a data export holds, by its type (Zulip's RealmExport.type and zerver/lib/export.py):
 *
 * - **public** (1): the public channels' messages only (no direct messages, no group DMs, no
 *   private channel's messages), and no user's private data: alert words, muted users, topics'
 *   visibility are left out, subscriptions keep only who is subscribed where, settings are the
 *   organization's defaults. A user whose email address is visible to nobody gets a made-up one
 *   and is exported as a deactivated placeholder (a mirror dummy).
 * - **full with consent** (2): that, plus what the users who consent (`allow_private_data_export`;
 *   bots whose owner consents; placeholders) can read: their direct messages and group DMs,
 *   the private channels they are subscribed to (all of a channel's history where it is shared
 *   with subscribers, otherwise the messages they received), and their own private data. Users
 *   who did not consent are exported as deactivated placeholders with the defaults' settings.
 * - **full** (3): everything, the command line's export (`npm run manage -- export`).
 *
 * Whatever the type, an export made through the API leaves out password hashes and API keys
 * (Zulip never exports them): its file is downloaded through a URL.
 */
import { randomBytes } from "node:crypto";
import { Prisma, type Db } from "../../db/index.ts";
import { EmailVisibility } from "../users/users.ts";

export const ExportType = { PUBLIC: 1, FULL_WITH_CONSENT: 2, FULL_WITHOUT_CONSENT: 3 } as const;
export type ExportTypeValue = (typeof ExportType)[keyof typeof ExportType];

export interface ExportScope {
  type: ExportTypeValue;
  /** The users whose private data goes in (type 2); every user for type 3, none for type 1. */
  consenting: number[];
  /** Whether secrets (API keys, password hashes) go in: the command line's full export only. */
  secrets: boolean;
  /** The domain of made-up addresses (Zulip's get_fake_email_domain). */
  fakeEmailDomain: string;
}

export const FULL_EXPORT: ExportScope = {
  type: ExportType.FULL_WITHOUT_CONSENT,
  consenting: [],
  secrets: true,
  fakeEmailDomain: "",
};

/**
 * Zulip's get_consented_user_ids: humans who allow it, bots that allow it or whose owner does,
 * and mirror dummies (placeholders hold nothing private).
 */
export async function consentedUserIds(db: Db, realmId: number): Promise<number[]> {
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT u.id FROM user_profile u LEFT JOIN user_profile o ON o.id = u.bot_owner_id
    WHERE u.realm_id = ${realmId}
      AND (u.allow_private_data_export OR u.is_mirror_dummy
           OR (u.is_bot AND o.allow_private_data_export))
    ORDER BY u.id`;
  return rows.map((r) => r.id);
}

/** Per-user tables that hold a user's private data, and the column naming the user. */
const PRIVATE_TABLES: Record<string, string> = {
  alert_word: "user_profile_id",
  muted_user: "user_profile_id",
  user_topic: "user_profile_id",
  user_status: "user_profile_id",
  saved_snippet: "user_profile_id",
  navigation_view: "user_profile_id",
  bot_storage_data: "bot_profile_id",
  // Only those not yet sent (a sent one's message is exported as a message, if at all).
  scheduled_message: "sender_id",
};

/**
 * Which messages an export holds, as a condition on `message m` (the organization's already):
 * every one for a full export; the public channels' for a public one; and for a consented one
 * also what the consenting users can read.
 */
export function messageCondition(scope: ExportScope): Prisma.Sql {
  if (scope.type === ExportType.FULL_WITHOUT_CONSENT) return Prisma.sql`TRUE`;
  const publicChannel = Prisma.sql`m.recipient_id IN (SELECT s.recipient_id FROM stream s
    WHERE s.realm_id = m.realm_id AND NOT s.invite_only)`;
  if (scope.type === ExportType.PUBLIC) return publicChannel;
  const consenting = scope.consenting;
  return Prisma.sql`(${publicChannel}
    OR EXISTS (SELECT 1 FROM user_message um
               WHERE um.message_id = m.id AND um.user_profile_id = ANY (${consenting}::int[]))
    OR m.recipient_id IN (SELECT s.recipient_id FROM stream s
         JOIN subscription sub ON sub.recipient_id = s.recipient_id
         WHERE s.realm_id = m.realm_id AND s.invite_only AND s.history_public_to_subscribers
           AND sub.active AND sub.user_profile_id = ANY (${consenting}::int[])))`;
}

/** Rows of per-user tables to keep: a consenting user's (all for a full export, none for public). */
export function privateRowsCondition(table: string, scope: ExportScope): Prisma.Sql | null {
  const column = PRIVATE_TABLES[table];
  if (!column || scope.type === ExportType.FULL_WITHOUT_CONSENT) return null;
  if (scope.type === ExportType.PUBLIC) return Prisma.sql`FALSE`;
  const own = Prisma.sql`${Prisma.raw(column)} = ANY (${scope.consenting}::int[])`;
  return table === "scheduled_message" ? Prisma.sql`${own} AND NOT delivered` : own;
}

/**
 * Direct-message groups, and their recipients and subscriptions: a public export has none, a
 * consented one those a consenting user is in.
 */
export function directMessageGroupCondition(scope: ExportScope, recipientColumn: string) {
  if (scope.type === ExportType.FULL_WITHOUT_CONSENT) return null;
  const groupRecipients =
    scope.type === ExportType.PUBLIC
      ? Prisma.sql`SELECT g.recipient_id FROM direct_message_group g WHERE g.recipient_id IS NOT NULL`
      : Prisma.sql`SELECT g.recipient_id FROM direct_message_group g WHERE g.recipient_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM subscription sub WHERE sub.recipient_id = g.recipient_id
                          AND sub.user_profile_id = ANY (${scope.consenting}::int[]))`;
  return Prisma.sql`${Prisma.raw(recipientColumn)} IS NULL OR ${Prisma.raw(recipientColumn)} NOT IN (${groupRecipients})`;
}

/** The user settings columns a non-consenting user's row takes from the organization's defaults. */
export async function defaultSettings(db: Db, realmId: number): Promise<Record<string, unknown>> {
  const [row] = await db.$queryRaw<{ d: Record<string, unknown> | null }[]>`
    SELECT to_jsonb(d) - 'id' - 'realm_id' - 'email_address_visibility' AS d
    FROM realm_user_default d WHERE d.realm_id = ${realmId}`;
  return row?.d ?? {};
}

/**
 * A user row as the export writes it: secrets dropped unless the scope keeps them; a user whose
 * private data is not exported gets the organization's default settings, and becomes a
 * deactivated placeholder where Zulip makes one (not consenting, or — in a public export — an
 * address visible to nobody, which is replaced by a made-up one).
 */
export function scopeUserRow(
  row: Record<string, unknown>,
  scope: ExportScope,
  consenting: Set<number>,
  defaults: Record<string, unknown>,
): Record<string, unknown> {
  if (!scope.secrets) {
    delete row.api_key;
    delete row.password_hash;
  }
  if (scope.type === ExportType.FULL_WITHOUT_CONSENT) return row;
  const id = Number(row.id);
  if (consenting.has(id)) return row;
  for (const [key, value] of Object.entries(defaults)) if (key in row) row[key] = value;
  const hidden =
    scope.type === ExportType.PUBLIC &&
    Number(row.email_address_visibility) === EmailVisibility.NOBODY;
  if (hidden) {
    const email = `exported-user-${randomBytes(8).toString("hex")}@${scope.fakeEmailDomain}`;
    row.delivery_email = email;
    row.email = email;
  }
  if (scope.type === ExportType.FULL_WITH_CONSENT || hidden) {
    row.is_mirror_dummy = true;
    row.is_active = false;
  }
  return row;
}

/** A subscription row of a public export: who is subscribed where, nothing of their settings. */
export function scopeSubscriptionRow(
  row: Record<string, unknown>,
  scope: ExportScope,
  consenting: Set<number>,
): Record<string, unknown> {
  if (scope.type === ExportType.FULL_WITHOUT_CONSENT) return row;
  if (consenting.has(Number(row.user_profile))) return row;
  const kept: Record<string, unknown> = {};
  for (const key of ["id", "user_profile", "recipient", "active", "is_user_active"])
    if (key in row) kept[key] = row[key];
  return kept;
}
