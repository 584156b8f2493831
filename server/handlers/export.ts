/**
 * GET, POST /export/realm, DELETE /export/realm/{export_id} and GET /export/realm/consents
 * (zerver/views/realm_export.py). All are require_realm_admin: the role is checked before the
 * handler, from the spec's `x-zulip-requires-role`; `export_type` is checked by the spec.
 */
import { doDeleteRealmExport, doRequestRealmExport } from "../actions/realm/realm-export.ts";
import type { Handler } from "../http/types.ts";
import { exportConsents, realmExports } from "../lib/realm/export.ts";
import { realmUrl } from "../lib/realm/realm.ts";

export const getRealmExports: Handler<"get-realm-exports"> = async (_req, ctx) => ({
  exports: await realmExports(ctx.db, ctx.realm.id, await realmUrl(ctx.db, ctx.realm, ctx.config)),
});

export const exportRealm: Handler<"export-realm"> = async ({ body }, ctx) => ({
  id: await doRequestRealmExport(ctx, body?.export_type ?? 1),
});

export const deleteRealmExport: Handler<"delete-realm-export"> = async ({ path }, ctx) => {
  await doDeleteRealmExport(ctx, path.export_id);
  return {};
};

export const getRealmExportConsents: Handler<"get-realm-export-consents"> = async (_req, ctx) => {
  return { export_consents: await exportConsents(ctx.db, ctx.realm.id) };
};
