/** GET and POST /export/realm, GET /export/realm/consents (zerver/views/realm_export.py). */
import type { Handler } from "../http/types.ts";
import { exportConsents, manualExportRequired } from "../lib/realm/export.ts";

/**
 * GET, POST /export/realm and GET /export/realm/consents are require_realm_admin: the role is
 * checked before the handler, from the spec's `x-zulip-requires-role`.
 */

/** get_realm_exports: no export is ever made here. */
export const getRealmExports: Handler<"get-realm-exports"> = async () => ({ exports: [] });

/** export_realm: export_type is checked by the spec. */
export const exportRealm: Handler<"export-realm"> = async (_req, ctx) => {
  throw manualExportRequired(ctx.config);
};

export const getRealmExportConsents: Handler<"get-realm-export-consents"> = async (_req, ctx) => {
  return { export_consents: await exportConsents(ctx.db, ctx.realm.id) };
};
