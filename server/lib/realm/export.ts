/**
 * Data exports (zerver/views/realm_export.py, zerver/lib/export.py): the list administrators
 * see, the checks a request passes in Zulip's order, and the users' consents. Requesting and
 * deleting are actions/realm/realm-export.ts; making one is workers/realm-exports.ts.
 */
import type { Config } from "../../config.ts";
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { ExportType } from "../export/export-scope.ts";
import { EmailVisibility, Role } from "../users/users.ts";

/** RealmExport.status. */
export const ExportStatus = {
  REQUESTED: 1,
  STARTED: 2,
  SUCCEEDED: 3,
  FAILED: 4,
  DELETED: 5,
} as const;

/** export_realm's limits: requests per week, and what may be exported by request at all. */
export const EXPORT_LIMIT = 5;
export const EXPORT_LIMIT_DAYS = 7;
export const MAX_MESSAGE_HISTORY = 250_000;
export const MAX_UPLOAD_QUOTA = 20 * 1024 * 1024 * 1024;

/**
 * Where an export's tarball is kept: `exports/<realm>/<secret>/<name>`, in the upload store
 * beside the avatars, and served at `/user_avatars/<that>` without credentials (the secret
 * part is what protects it, as Zulip's upload_export_tarball does).
 */
export const exportPathId = (exportPath: string) => `avatars/${exportPath}`;
export const exportUrl = (realmUrl: string, exportPath: string) =>
  `${realmUrl}/user_avatars/${exportPath}`;

export interface RealmExportRow {
  id: number;
  actingUserId: number | null;
  type: number;
  status: number;
  dateRequested: Date;
  dateFailed: Date | null;
  dateDeleted: Date | null;
  exportPath: string | null;
}

const seconds = (d: Date | null) => (d ? d.getTime() / 1000 : null);

/**
 * get_realm_exports_serialized: every export whose requester still exists, by id; a URL only
 * for a made one not deleted since.
 */
export async function realmExports(db: Db, realmId: number, realmUrl: string) {
  const rows: RealmExportRow[] = await db.realmExport.findMany({
    where: { realmId, actingUserId: { not: null } },
    select: {
      id: true,
      actingUserId: true,
      type: true,
      status: true,
      dateRequested: true,
      dateFailed: true,
      dateDeleted: true,
      exportPath: true,
    },
    orderBy: { id: "asc" },
  });
  return rows.map((r) => ({
    id: r.id,
    acting_user_id: r.actingUserId!,
    export_time: r.dateRequested.getTime() / 1000,
    deleted_timestamp: seconds(r.dateDeleted),
    failed_timestamp: seconds(r.dateFailed),
    export_url:
      r.status === ExportStatus.SUCCEEDED && r.exportPath
        ? exportUrl(realmUrl, r.exportPath)
        : null,
    pending: r.status === ExportStatus.REQUESTED || r.status === ExportStatus.STARTED,
    export_type: r.type as 1 | 2 | 3,
  }));
}

/**
 * export_realm's checks after the role, in Zulip's order: the week's requests, the size of what
 * would be exported (messages counted only up to the limit, so the check costs the same in any
 * organization), and an owner the export can name: one who consents (standard), or whose email
 * address administrators can see (public).
 */
export async function checkExportRequest(
  db: Db,
  realmId: number,
  type: number,
  now: Date,
  config: Pick<Config, "zulipAdministrator">,
): Promise<void> {
  const since = new Date(now.getTime() - EXPORT_LIMIT_DAYS * 86_400_000);
  const recent = await db.realmExport.count({
    where: { realmId, dateRequested: { gte: since } },
  });
  if (recent >= EXPORT_LIMIT) throw new JsonableError("Exceeded rate limit.");

  const [{ messages, bytes }] = await db.$queryRaw<[{ messages: number; bytes: bigint | null }]>`
    SELECT (SELECT count(*)::int FROM (SELECT 1 FROM message WHERE realm_id = ${realmId}
              LIMIT ${MAX_MESSAGE_HISTORY + 1}) m) AS messages,
           (SELECT sum(size)::bigint FROM attachment WHERE realm_id = ${realmId}) AS bytes`;
  const support = config.zulipAdministrator;
  if (messages > MAX_MESSAGE_HISTORY || Number(bytes ?? 0) > MAX_UPLOAD_QUOTA)
    throw new JsonableError(`Please request a manual export from ${support}.`);

  const owners = await db.userProfile.findMany({
    where: { realmId, isActive: true, isBot: false, role: Role.OWNER },
    select: { allowPrivateDataExport: true, emailAddressVisibility: true },
  });
  if (type === ExportType.FULL_WITH_CONSENT && !owners.some((o) => o.allowPrivateDataExport))
    throw new JsonableError(
      `Make sure at least one Organization Owner is consenting to the export or contact ${support} for help.`,
    );
  if (
    type === ExportType.PUBLIC &&
    !owners.some((o) => o.emailAddressVisibility !== EmailVisibility.NOBODY)
  )
    throw new JsonableError(
      `Make sure at least one Organization Owner allows other Administrators to see their email address or contact ${support} for help`,
    );
}

/** get_users_export_consents: the active human users, with allow_private_data_export. */
export async function exportConsents(db: Db, realmId: number) {
  const rows = await db.userProfile.findMany({
    where: { realmId, isActive: true, isBot: false },
    select: { id: true, allowPrivateDataExport: true },
    orderBy: { id: "asc" },
  });
  return rows.map((r) => ({ user_id: r.id, consented: r.allowPrivateDataExport }));
}
