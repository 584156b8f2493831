/**
 * The `realm_export` event (zerver/actions/realm_export.py notify_realm_export): the
 * organization's whole list of data exports, sent whenever one is requested, made, failed or
 * deleted. Its own module: the requests (realm-export.ts) and the loop that makes the exports
 * (workers/realm-exports.ts) both send it.
 */
import type { AppDeps } from "../../context.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { realmExports } from "../../lib/realm/export.ts";
import { realmUrl } from "../../lib/realm/realm.ts";
import { activeAdminIds } from "../../lib/users/users.ts";

/** To the organization's human administrators, who alone may list the exports. */
export async function notifyRealmExport(
  { tx, events }: UnitOfWork,
  deps: Pick<AppDeps, "config">,
  realm: { id: number; stringId: string },
): Promise<void> {
  const admins = await activeAdminIds(tx, realm.id, { humans: true });
  if (admins.length === 0) return;
  const exports = await realmExports(tx, realm.id, await realmUrl(tx, realm, deps.config));
  events.add({ type: "realm_export", exports }, admins);
}

/**
 * The `realm_export_consent` event: a user's consent to exports of their private data, to the
 * organization's administrators (bots too, as Zulip sends it), when the user changes it or
 * joins or comes back (their consent then enters GET /export/realm/consents).
 */
export async function notifyExportConsent(
  { tx, events }: UnitOfWork,
  realmId: number,
  user: { id: number; allowPrivateDataExport: boolean },
): Promise<void> {
  const admins = await activeAdminIds(tx, realmId);
  if (admins.length)
    events.add(
      { type: "realm_export_consent", user_id: user.id, consented: user.allowPrivateDataExport },
      admins,
    );
}
