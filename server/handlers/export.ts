/** GET and POST /export/realm, GET /export/realm/consents (zerver/views/realm_export.py). */
import type { Handler } from "../http/types.ts";
import { exportConsents, manualExportRequired, requireRealmAdmin } from "../lib/realm/export.ts";

/** get_realm_exports: no export is ever made here. */
export const getRealmExports: Handler<"get-realm-exports"> = async (_req, ctx) => {
  requireRealmAdmin(ctx.user);
  return { exports: [] };
};

/** export_realm: past the administrator check (export_type is checked by the spec). */
export const exportRealm: Handler<"export-realm"> = async (_req, ctx) => {
  requireRealmAdmin(ctx.user);
  throw manualExportRequired(ctx.config);
};

export const getRealmExportConsents: Handler<"get-realm-export-consents"> = async (_req, ctx) => {
  requireRealmAdmin(ctx.user);
  return { export_consents: await exportConsents(ctx.db, ctx.realm.id) };
};
