/**
 * The `invites_changed` event (zerver/lib/invites.py notify_invites_changed): tells the
 * organization's administrators (bots included), and the referrer of a changed invitation when
 * they are not one, to fetch the invitation list again. It carries no data, so one event serves
 * every kind of change: sent, revoked, resent, used.
 */
import type { UnitOfWork } from "../../events/index.ts";
import { activeAdminIds } from "../../lib/users/users.ts";

export async function notifyInvitesChanged(
  { tx, events }: UnitOfWork,
  realmId: number,
  changedInviteReferrerId?: number | null,
): Promise<void> {
  const ids = await activeAdminIds(tx, realmId);
  if (changedInviteReferrerId != null && !ids.includes(changedInviteReferrerId))
    ids.push(changedInviteReferrerId);
  if (ids.length) events.add({ type: "invites_changed" }, ids);
}
