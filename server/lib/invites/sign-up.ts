/**
 * What a sign-up link (`/join/<key>/`) stands for (zerver/views/registration.py
 * get_prereg_key_and_redirect / accounts_home_from_multiuse_invite with confirmation's
 * get_object_from_key): an invitation or a confirmed address (a PreregistrationUser: the form
 * asks for a name and a password), or an invitation link anyone may use (a MultiuseInvite: the
 * form asks for an address first). A link that is malformed, unknown, expired, used or revoked
 * says which, as confirmation's error pages do.
 */
import type { Db } from "../../db/index.ts";
import {
  ConfirmationType,
  confirmationByKey,
  InviteStatus,
  isConfirmationKey,
} from "./confirmations.ts";

export type SignUpLink =
  | { kind: "malformed" }
  | { kind: "missing" }
  | { kind: "expired" }
  | {
      kind: "register";
      realmId: number;
      prereg: { id: number; email: string; fullName: string | null };
    }
  | { kind: "multiuse"; realmId: number; inviteId: number };

/** The types a `/join/<key>/` link may have. */
const JOIN_TYPES = [
  ConfirmationType.INVITATION,
  ConfirmationType.USER_REGISTRATION,
  ConfirmationType.MULTIUSE_INVITE,
];

/** The link behind `key` in the organization `realmId` (the one the request's host names). */
export async function signUpLink(
  db: Db,
  key: string,
  realmId: number,
  now: Date,
): Promise<SignUpLink> {
  if (!isConfirmationKey(key)) return { kind: "malformed" };
  const found = await confirmationByKey(db, key, JOIN_TYPES, now);
  if (!found.ok) return { kind: found.problem === "expired" ? "expired" : "missing" };
  // A link works only on its own organization's host (registration.py: link_does_not_exist).
  if (found.realmId !== realmId) return { kind: "missing" };
  if (found.type === ConfirmationType.MULTIUSE_INVITE) {
    const invite = await db.multiuseInvite.findFirst({
      where: { id: found.objectId, realmId },
      select: { id: true, status: true },
    });
    if (!invite) return { kind: "missing" };
    if (invite.status === InviteStatus.REVOKED) return { kind: "expired" };
    return { kind: "multiuse", realmId, inviteId: invite.id };
  }
  const prereg = await db.preregistrationUser.findFirst({
    where: { id: found.objectId, realmId },
    select: { id: true, email: true, fullName: true, status: true },
  });
  if (!prereg) return { kind: "missing" };
  // get_object_from_key: a used or revoked object's link has "expired or been deactivated".
  if (prereg.status !== InviteStatus.PENDING) return { kind: "expired" };
  return {
    kind: "register",
    realmId,
    prereg: { id: prereg.id, email: prereg.email, fullName: prereg.fullName },
  };
}
