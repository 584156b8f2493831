/**
 * Requesting and deleting data exports (zerver/views/realm_export.py, zerver/actions/
 * realm_export.py). A request writes a `realm_export` row in its transaction; the background
 * loop (workers/realm-exports.ts) in any process makes the export, records the outcome and
 * tells the administrators. Each change sends them the whole list (`realm_export`).
 */
import type { RequestContext } from "../../context.ts";
import type { Tx } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { isStorableId } from "../../lib/ids.ts";
import { checkExportRequest, exportPathId, ExportStatus } from "../../lib/realm/export.ts";
import { uploadStorage } from "../../lib/uploads/upload-storage.ts";
import { inTransaction } from "../transaction.ts";
import { notifyRealmExport } from "./realm-export-changed.ts";
import { realmExportsRequested } from "../../workers/realm-exports.ts";

/** export_realm: checks, records the request and announces it; the export's id. */
export async function doRequestRealmExport(ctx: RequestContext, type: 1 | 2): Promise<number> {
  const id = await inTransaction(ctx, ctx.realm.id, async (unit) => {
    const { tx } = unit;
    // One request at a time per organization: the week's count is then exact.
    await tx.$queryRaw`SELECT id FROM realm WHERE id = ${ctx.realm.id} FOR UPDATE`;
    const now = ctx.now();
    await checkExportRequest(tx, ctx.realm.id, type, now, ctx.config);
    const row = await tx.realmExport.create({
      data: {
        realmId: ctx.realm.id,
        type,
        status: ExportStatus.REQUESTED,
        actingUserId: ctx.user.id,
        dateRequested: now,
      },
      select: { id: true },
    });
    await notifyRealmExport(unit, ctx, ctx.realm);
    return row.id;
  });
  realmExportsRequested();
  return id;
}

/** delete_realm_export: a made export's file goes; the row stays, marked deleted. */
export async function doDeleteRealmExport(ctx: RequestContext, exportId: number): Promise<void> {
  const exportPath = await inTransaction(ctx, ctx.realm.id, async (unit) => {
    const row = await lockedExport(unit.tx, ctx.realm.id, exportId);
    if (!row) throw new JsonableError("Invalid data export ID");
    if (row.status === ExportStatus.DELETED) throw new JsonableError("Export already deleted");
    if (row.status === ExportStatus.FAILED)
      throw new JsonableError("Export failed, nothing to delete");
    if (row.status === ExportStatus.REQUESTED || row.status === ExportStatus.STARTED)
      throw new JsonableError("Export still in progress");
    await unit.tx.realmExport.update({
      where: { id: row.id },
      data: { status: ExportStatus.DELETED, dateDeleted: ctx.now() },
    });
    await notifyRealmExport(unit, ctx, ctx.realm);
    return row.exportPath;
  });
  // After the commit: a file left by a failure here is unreachable (the row says deleted).
  if (exportPath) await (await uploadStorage(ctx.config)).delete([exportPathId(exportPath)]);
}

async function lockedExport(tx: Tx, realmId: number, exportId: number) {
  // An id no row can have (beyond the column's integer) names no export.
  if (!isStorableId(exportId)) return null;
  const [row] = await tx.$queryRaw<{ id: number; status: number; exportPath: string | null }[]>`
    SELECT id, status, export_path AS "exportPath" FROM realm_export
    WHERE id = ${exportId} AND realm_id = ${realmId} FOR UPDATE`;
  return row ?? null;
}
