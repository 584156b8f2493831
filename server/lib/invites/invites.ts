/**
 * Invitations, the reads and checks (Zulip's zerver/views/invite.py access_* helpers,
 * zerver/lib/email_validation.py, zerver/actions/invites.py's limit and listing): who may invite
 * to which role, the addresses of a request and what is wrong with each, the organization's daily
 * limit, and the invitations a user may manage.
 */
import type { Config } from "../../config.ts";
import type { RequestContext } from "../../context.ts";
import type { Db, Realm, UserProfile } from "../../db/index.ts";
import { JsonableError, OrganizationOwnerRequiredError } from "../../errors.ts";
import { findChannelsById, findDefaultChannels } from "../channels/channels.ts";
import { accessChannels } from "../access/channels.ts";
import { ConfirmationType, InviteStatus, confirmationUrl } from "./confirmations.ts";
import { isValidEmail, realmEmailValidator } from "../email/addresses.ts";
import { isStorableId } from "../ids.ts";
import { realmUrl } from "../realm/realm.ts";
import type { Schemas } from "../schemas.ts";
import { canAddSubscribers } from "../access/subscriptions.ts";
import { Role, isRealmAdmin } from "../users/users.ts";

/** The outbox template of invitation emails; the daily limit counts them. */
export const INVITATION_TEMPLATE = "zerver/emails/invitation";

/** An [address, reason, is_deactivated] triple of INVITATION_FAILED. */
export type InviteError = [string, string, boolean];

/** Zulip's InvitationError: INVITATION_FAILED with its four data fields. */
export class InvitationError extends JsonableError {
  constructor(
    msg: string,
    errors: InviteError[],
    options: { sentInvitations: boolean; dailyLimitReached?: boolean },
  ) {
    super(msg, {
      code: "INVITATION_FAILED",
      data: {
        errors,
        sent_invitations: options.sentInvitations,
        license_limit_reached: false,
        daily_limit_reached: options.dailyLimitReached ?? false,
      },
    });
  }
}

/**
 * check_role_based_permissions: owners are invited by owners only; administrators and
 * moderators (and owners) by administrators.
 */
export function checkRoleBasedPermissions(
  invitedAs: number,
  user: Pick<UserProfile, "role">,
  requireAdmin = invitedAs <= Role.MODERATOR,
): void {
  if (invitedAs === Role.OWNER && user.role !== Role.OWNER)
    throw new OrganizationOwnerRequiredError();
  if (requireAdmin && !isRealmAdmin(user))
    throw new JsonableError("Must be an organization administrator");
}

/**
 * get_invitee_emails_set: the addresses separated by commas or newlines, `Name <address>` taken
 * for its address, stripped, without repeats. An empty entry (a trailing comma) stays: it is
 * skipped later but, as in Zulip, still counts as one of the invitees.
 */
export function inviteeEmails(raw: string): string[] {
  const emails = new Set<string>();
  for (const part of new Set(raw.split(/[,\n]/))) {
    const named = /<(.*)>/.exec(part);
    emails.add((named ? named[1]! : part).trim());
  }
  return [...emails];
}

/** Zulip's CROSS_REALM_BOT_EMAILS: the system bots' addresses, which nobody may be invited with. */
const CROSS_REALM_BOT_EMAILS = new Set([
  "notification-bot@zulip.com",
  "welcome-bot@zulip.com",
  "emailgateway@zulip.com",
]);

/**
 * validate_email_is_valid then get_existing_user_errors for a request's addresses: `errors`
 * (invalid or not allowed here: nothing may be sent), `skipped` (already has an account,
 * deactivated, or a system bot's) and the addresses left to invite. One statement for the users.
 */
export async function checkInviteeEmails(
  db: Db,
  realm: Pick<Realm, "id" | "emailsRestrictedToDomains" | "disallowDisposableEmailAddresses">,
  emails: string[],
): Promise<{ errors: InviteError[]; skipped: InviteError[]; good: string[] }> {
  const problemOf = await realmEmailValidator(db, realm);
  const reasons = {
    domain: "Outside your domain.",
    disposable: "Please use your real email address.",
    plus: "Email addresses containing + are not allowed.",
  } as const;
  const errors: InviteError[] = [];
  const valid: string[] = [];
  for (const email of emails) {
    if (email === "") continue;
    if (!isValidEmail(email)) {
      errors.push([email, "Invalid address.", false]);
      continue;
    }
    const problem = problemOf(email);
    if (problem) errors.push([email, reasons[problem], false]);
    else valid.push(email);
  }
  const users = valid.length
    ? await db.userProfile.findMany({
        where: {
          realmId: realm.id,
          deliveryEmail: { in: valid, mode: "insensitive" },
        },
        select: { deliveryEmail: true, isActive: true, isMirrorDummy: true },
      })
    : [];
  const byEmail = new Map(users.map((u) => [u.deliveryEmail.toLowerCase(), u]));
  const skipped: InviteError[] = [];
  const good: string[] = [];
  for (const email of valid) {
    const user = byEmail.get(email.toLowerCase());
    if (CROSS_REALM_BOT_EMAILS.has(email.toLowerCase()))
      skipped.push([email, "Reserved for system bots.", false]);
    else if (!user || user.isMirrorDummy) good.push(email);
    else if (user.isActive) skipped.push([email, "Already has an account.", false]);
    else skipped.push([email, "Account has been deactivated.", true]);
  }
  return { errors, skipped, good };
}

/** The organization's daily maximum: its own max_invites, else INVITES_DEFAULT_REALM_DAILY_MAX. */
export function maxInvites(realm: Pick<Realm, "maxInvites">, config: Config): number {
  return realm.maxInvites ?? config.invitesDefaultRealmDailyMax;
}

/**
 * check_invite_limit's first rule (too_many_recent_realm_invites): the invitation emails the
 * organization queued in the last 24 hours (Zulip's invites_sent::day count, resends included)
 * plus these may not exceed its maximum. Call it with the organization locked.
 */
export async function checkInviteLimit(
  db: Db,
  realm: Pick<Realm, "id" | "maxInvites">,
  config: Config,
  count: number,
  now: Date,
): Promise<void> {
  const recent = await db.emailOutbox.count({
    where: {
      realmId: realm.id,
      templateName: INVITATION_TEMPLATE,
      createdAt: { gte: new Date(now.getTime() - 86_400_000) },
    },
  });
  if (recent + count > maxInvites(realm, config))
    throw new InvitationError(
      "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
      [],
      { sentInvitations: false, dailyLimitReached: true },
    );
}

/**
 * access_streams_for_invite: every id a channel the caller can access ("Invalid channel ID N. No
 * invites were sent."), then each a default channel or one they may add subscribers to.
 */
export async function accessChannelsForInvite(
  ctx: Pick<RequestContext, "db" | "user" | "realm">,
  streamIds: number[],
): Promise<number[]> {
  if (streamIds.length === 0) return [];
  const found = new Map(
    (await findChannelsById(ctx.db, ctx.realm.id, streamIds)).map((s) => [s.id, s]),
  );
  const { inaccessible } = await accessChannels(ctx.db, ctx.user, found.values());
  const denied = new Set(inaccessible.map((s) => s.id));
  for (const id of streamIds) {
    const stream = found.get(id);
    if (!stream || denied.has(stream.id))
      throw new JsonableError(`Invalid channel ID ${id}. No invites were sent.`);
  }
  const defaults = new Set((await findDefaultChannels(ctx.db, ctx.realm.id)).map((s) => s.id));
  for (const stream of found.values())
    if (!defaults.has(stream.id) && !(await canAddSubscribers(ctx, stream)))
      throw new JsonableError("You do not have permission to subscribe other users to channels.");
  return [...found.keys()];
}

type ApiInvite = Schemas["Invite"];

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * do_get_invites_controlled_by_user: the pending, unexpired email invitations and links an
 * administrator may manage (the organization's) or anyone else (their own); two statements.
 */
export async function invitesControlledBy(
  ctx: Pick<RequestContext, "db" | "user" | "realm" | "config">,
  now: Date,
): Promise<ApiInvite[]> {
  const whose = isRealmAdmin(ctx.user)
    ? { realmId: ctx.realm.id, referredById: { not: null } }
    : { realmId: ctx.realm.id, referredById: ctx.user.id };
  const unexpired = { OR: [{ expiryDate: null }, { expiryDate: { gte: now } }] };
  const [emailInvites, links] = await Promise.all([
    ctx.db.preregistrationUser.findMany({
      where: { ...whose, status: InviteStatus.PENDING, ...unexpired },
      orderBy: { id: "asc" },
    }),
    ctx.db.multiuseInvite.findMany({
      where: { ...whose, status: InviteStatus.PENDING, ...unexpired },
      orderBy: { id: "asc" },
    }),
  ]);
  const keys = links.length
    ? await ctx.db.confirmation.findMany({
        where: { type: ConfirmationType.MULTIUSE_INVITE, objectId: { in: links.map((l) => l.id) } },
        select: { objectId: true, confirmationKey: true },
      })
    : [];
  const keyOf = new Map(keys.map((k) => [k.objectId, k.confirmationKey]));
  const base = links.length ? await realmUrl(ctx.db, ctx.realm, ctx.config) : "";
  return [
    ...emailInvites.map((p) => ({
      id: p.id,
      email: p.email,
      invited_by_user_id: p.referredById!,
      invited: seconds(p.invitedAt),
      expiry_date: p.expiryDate && seconds(p.expiryDate),
      invited_as: p.invitedAs as ApiInvite["invited_as"],
      is_multiuse: false,
      notify_referrer_on_join: p.notifyReferrerOnJoin,
    })),
    ...links
      .filter((l) => keyOf.has(l.id))
      .map((l) => ({
        id: l.id,
        invited_by_user_id: l.referredById!,
        invited: seconds(l.createdAt),
        expiry_date: l.expiryDate && seconds(l.expiryDate),
        invited_as: l.invitedAs as ApiInvite["invited_as"],
        is_multiuse: true,
        link_url: confirmationUrl(base, keyOf.get(l.id)!),
      })),
  ];
}

/**
 * access_invite_by_id (revoke, resend): a pending email invitation of the caller's organization
 * ("No such invitation"); someone else's needs an administrator, and an owner for an owner's.
 */
export async function accessInviteById(
  db: Db,
  user: Pick<UserProfile, "id" | "realmId" | "role">,
  inviteId: number,
) {
  if (!isStorableId(inviteId)) throw new JsonableError("No such invitation");
  const invite = await db.preregistrationUser.findFirst({
    where: {
      id: inviteId,
      realmId: user.realmId,
      referredById: { not: null },
      status: InviteStatus.PENDING,
    },
  });
  if (!invite) throw new JsonableError("No such invitation");
  if (invite.referredById !== user.id) checkRoleBasedPermissions(invite.invitedAs, user, true);
  return invite;
}

/** access_multiuse_invite_by_id: as accessInviteById, and "Invitation has already been revoked". */
export async function accessMultiuseInviteById(
  db: Db,
  user: Pick<UserProfile, "id" | "realmId" | "role">,
  inviteId: number,
) {
  if (!isStorableId(inviteId)) throw new JsonableError("No such invitation");
  const invite = await db.multiuseInvite.findFirst({
    where: { id: inviteId, realmId: user.realmId },
  });
  if (!invite) throw new JsonableError("No such invitation");
  if (invite.referredById !== user.id) checkRoleBasedPermissions(invite.invitedAs, user, true);
  if (invite.status === InviteStatus.REVOKED)
    throw new JsonableError("Invitation has already been revoked");
  return invite;
}
