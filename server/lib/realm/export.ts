/**
 * Data exports (zerver/views/realm_export.py), as a server that cannot make them yet: the list
 * is empty, a request is answered as Zulip answers one it will not make automatically, and the
 * users' consents are read as Zulip reads them.
 */
import type { Config } from "../../config.ts";
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";

/**
 * export_realm's refusal of an export too large to make on request. Zulip's other refusals
 * ("Exceeded rate limit.", the owner-consent ones) would say something untrue here: nothing
 * was exported, and consents do not matter, since no export can be made by request at all.
 * Asking the server's administrator is what an administrator can do.
 */
export function manualExportRequired(config: Pick<Config, "zulipAdministrator">): JsonableError {
  return new JsonableError(`Please request a manual export from ${config.zulipAdministrator}.`);
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
