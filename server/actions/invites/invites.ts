/**
 * Invitations (zerver/actions/invites.py): sending email invitations, resending and revoking
 * them, and creating and revoking reusable invitation links. Each is one transaction: the rows,
 * their confirmation keys, the emails queued in the outbox (sent after commit by the delivery
 * loop) and the `invites_changed` event. Sending and resending lock the organization's row, so
 * two requests cannot both pass the daily limit.
 */
import type { RequestContext } from "../../context.ts";
import type { Realm, Tx } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { invitationEmail } from "../../lib/email/invitation.ts";
import {
  ConfirmationType,
  InviteStatus,
  confirmationUrl,
  createConfirmation,
  generateConfirmationKey,
} from "../../lib/invites/confirmations.ts";
import {
  INVITATION_TEMPLATE,
  InvitationError,
  accessChannelsForInvite,
  accessInviteById,
  accessMultiuseInviteById,
  checkInviteLimit,
  checkInviteeEmails,
  checkRoleBasedPermissions,
  inviteeEmails,
  type InviteError,
} from "../../lib/invites/invites.ts";
import { can } from "../../lib/groups/permissions.ts";
import { realmUrl } from "../../lib/realm/realm.ts";
import { refuseNul } from "../../lib/text.ts";
import { isRealmAdmin, requireMemberOrAdmin } from "../../lib/users/users.ts";
import { queueEmail, queueEmails, type OutgoingEmail } from "../email/outbox.ts";
import { notifyInvitesChanged } from "./invites-changed.ts";
import { inTransaction } from "../transaction.ts";
import { accessUserGroupForUpdate } from "../groups/user-groups.ts";

type Ctx = RequestContext;

/** What an invitation or link grants, as the request gave it. */
export interface InviteOptions {
  /** Minutes until it expires; null: never; undefined: INVITATION_LINK_VALIDITY_MINUTES. */
  expiresInMinutes?: number | null;
  invitedAs: number;
  streamIds: number[];
  groupIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  /** Absent: the organization's default welcome text; "": none. */
  welcomeMessageCustomText?: string;
}

/**
 * The checks POST /invites and POST /invites/multiuse share after their own permission, in
 * Zulip's order: the role, then (for email invitations) the addresses' presence, the channels,
 * the groups, and the custom welcome text (administrators only). They run before the
 * transaction, as Zulip's do (the embedded database has one connection: no read beside it).
 */
async function checkInviteOptions(
  ctx: Ctx,
  options: InviteOptions,
  beforeChannels: () => void = () => {},
) {
  checkRoleBasedPermissions(options.invitedAs, ctx.user);
  beforeChannels();
  const streamIds = await accessChannelsForInvite(ctx, options.streamIds);
  const groupIds: number[] = [];
  for (const id of new Set(options.groupIds))
    groupIds.push(
      (
        await accessUserGroupForUpdate(ctx.db, ctx, id, ["can_add_members_group"], {
          allowDeactivated: false,
        })
      ).id,
    );
  if (options.welcomeMessageCustomText !== undefined && !isRealmAdmin(ctx.user))
    throw new JsonableError("Must be an organization administrator");
  // Zulip stores any text; PostgreSQL cannot hold NUL.
  if (options.welcomeMessageCustomText !== undefined)
    refuseNul(options.welcomeMessageCustomText, "welcome message");
  return { streamIds, groupIds };
}

function expiryDate(ctx: Ctx, now: Date, minutes: number | null | undefined): Date | null {
  const m = minutes === undefined ? ctx.config.invitationLinkValidityMinutes : minutes;
  return m === null ? null : new Date(now.getTime() + m * 60_000);
}

/** The organization's row, locked for the rest of the transaction, with its current max_invites. */
async function lockRealm(tx: Tx, realm: Realm): Promise<Realm> {
  const [row] = await tx.$queryRaw<{ max_invites: number | null }[]>`
    SELECT max_invites FROM realm WHERE id = ${realm.id} FOR UPDATE`;
  return { ...realm, maxInvites: row?.max_invites ?? null };
}

/** An invitation's email (do_send_user_invite_email), in the name of `referrer`. */
function invitationMail(
  ctx: Ctx,
  referrer: Pick<Ctx["user"], "fullName" | "deliveryEmail">,
  base: string,
  invite: { email: string; key: string; expiryDate: Date | null },
): OutgoingEmail {
  const mail = invitationEmail({
    referrerFullName: referrer.fullName,
    referrerEmail: referrer.deliveryEmail,
    realmName: ctx.realm.name,
    realmUrl: base,
    activateUrl: confirmationUrl(base, invite.key),
    expiryDate: invite.expiryDate,
  });
  return { realmId: ctx.realm.id, to: invite.email, ...mail, template: INVITATION_TEMPLATE };
}

/**
 * invite_users_backend + do_invite_users. Returns the skipped addresses (already users) when
 * others were invited; the caller answers them as INVITATION_FAILED with sent_invitations.
 */
export async function doInviteUsers(
  ctx: Ctx,
  inviteeEmailsRaw: string,
  options: InviteOptions & { notifyReferrerOnJoin: boolean },
): Promise<InviteError[]> {
  requireMemberOrAdmin(ctx.user);
  if (!(await can(ctx.db, ctx.user, ctx.realm, "can_invite_users_group")))
    throw new JsonableError("Insufficient permission");
  const now = ctx.now();
  const base = await realmUrl(ctx.db, ctx.realm, ctx.config);
  const { streamIds, groupIds } = await checkInviteOptions(ctx, options, () => {
    if (!inviteeEmailsRaw) throw new JsonableError("You must specify at least one email address.");
  });
  return inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const emails = inviteeEmails(inviteeEmailsRaw);
    const realm = await lockRealm(tx, ctx.realm);
    await checkInviteLimit(tx, realm, ctx.config, emails.length, now);
    // An organization anyone may join: a new account may not be a way to send spam invitations.
    if (
      !realm.inviteRequired &&
      !isRealmAdmin(ctx.user) &&
      ctx.user.dateJoined.getTime() > now.getTime() - ctx.config.invitesMinUserAgeDays * 86_400_000
    )
      throw new InvitationError(
        "Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.",
        [],
        { sentInvitations: false },
      );
    const { errors, skipped, good } = await checkInviteeEmails(tx, realm, emails);
    if (errors.length)
      throw new InvitationError(
        "Some emails did not validate, so we didn't send any invitations.",
        [...errors, ...skipped],
        { sentInvitations: false },
      );
    if (skipped.length && skipped.length === emails.length)
      throw new InvitationError("We weren't able to invite anyone.", skipped, {
        sentInvitations: false,
      });
    const expiry = expiryDate(ctx, now, options.expiresInMinutes);
    const rows = await tx.preregistrationUser.createManyAndReturn({
      data: good.map((email) => ({
        realmId: realm.id,
        email,
        referredById: ctx.user.id,
        invitedAt: now,
        expiryDate: expiry,
        invitedAs: options.invitedAs,
        includeRealmDefaultSubscriptions: options.includeRealmDefaultSubscriptions,
        notifyReferrerOnJoin: options.notifyReferrerOnJoin,
        welcomeMessageCustomText: options.welcomeMessageCustomText ?? null,
      })),
      select: { id: true, email: true },
    });
    const ids = rows.map((r) => r.id);
    if (streamIds.length)
      await tx.preregistrationUserStream.createMany({
        data: ids.flatMap((id) =>
          streamIds.map((streamId) => ({ preregistrationUserId: id, streamId })),
        ),
      });
    if (groupIds.length)
      await tx.preregistrationUserGroup.createMany({
        data: ids.flatMap((id) =>
          groupIds.map((groupId) => ({ preregistrationUserId: id, userGroupId: groupId })),
        ),
      });
    const keyed = rows.map((r) => ({ ...r, key: generateConfirmationKey() }));
    await tx.confirmation.createMany({
      data: keyed.map((r) => ({
        realmId: realm.id,
        type: ConfirmationType.INVITATION,
        objectId: r.id,
        confirmationKey: r.key,
        dateSent: now,
        expiryDate: expiry,
      })),
    });
    await queueEmails(
      tx,
      keyed.map((r) => invitationMail(ctx, ctx.user, base, { ...r, expiryDate: expiry })),
    );
    await notifyInvitesChanged({ tx, events }, realm.id, ctx.user.id);
    return skipped;
  });
}

/**
 * resend_user_invite_email + do_send_user_invite_email: the same link again, in a new email, with
 * the expiry unchanged; it counts towards the daily limit. Zulip sends no invites_changed for it.
 */
export async function doResendInvite(ctx: Ctx, inviteId: number): Promise<void> {
  requireMemberOrAdmin(ctx.user);
  const now = ctx.now();
  const base = await realmUrl(ctx.db, ctx.realm, ctx.config);
  await inTransaction(ctx, ctx.realm.id, async ({ tx }) => {
    const invite = await accessInviteById(tx, ctx.user, inviteId);
    const realm = await lockRealm(tx, ctx.realm);
    await checkInviteLimit(tx, realm, ctx.config, 1, now);
    const confirmation = await tx.confirmation.findFirst({
      where: { type: ConfirmationType.INVITATION, objectId: invite.id },
      select: { confirmationKey: true, expiryDate: true },
    });
    if (!confirmation) throw new JsonableError("No such invitation");
    // The email names its referrer: the invitation's, who may not be the one resending it.
    const referrer = await tx.userProfile.findUniqueOrThrow({
      where: { id: invite.referredById! },
    });
    await queueEmail(
      tx,
      invitationMail(ctx, referrer, base, {
        email: invite.email,
        key: confirmation.confirmationKey,
        expiryDate: confirmation.expiryDate,
      }),
    );
  });
}

/** revoke_user_invite: the invitation is marked revoked (its link then says so). */
export async function doRevokeInvite(ctx: Ctx, inviteId: number): Promise<void> {
  requireMemberOrAdmin(ctx.user);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const invite = await accessInviteById(tx, ctx.user, inviteId);
    await tx.preregistrationUser.update({
      where: { id: invite.id },
      data: { status: InviteStatus.REVOKED },
    });
    await notifyInvitesChanged({ tx, events }, ctx.realm.id, invite.referredById);
  });
}

/** generate_multiuse_invite_backend + do_create_multiuse_invite_link: returns the link. */
export async function doCreateMultiuseInvite(ctx: Ctx, options: InviteOptions): Promise<string> {
  requireMemberOrAdmin(ctx.user);
  if (!(await can(ctx.db, ctx.user, ctx.realm, "create_multiuse_invite_group")))
    throw new JsonableError("Insufficient permission");
  const now = ctx.now();
  const base = await realmUrl(ctx.db, ctx.realm, ctx.config);
  const { streamIds, groupIds } = await checkInviteOptions(ctx, options);
  return inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const expiry = expiryDate(ctx, now, options.expiresInMinutes);
    const invite = await tx.multiuseInvite.create({
      data: {
        realmId: ctx.realm.id,
        referredById: ctx.user.id,
        invitedAs: options.invitedAs,
        includeRealmDefaultSubscriptions: options.includeRealmDefaultSubscriptions,
        welcomeMessageCustomText: options.welcomeMessageCustomText ?? null,
        createdAt: now,
        expiryDate: expiry,
        streams: { create: streamIds.map((streamId) => ({ streamId })) },
        groups: { create: groupIds.map((userGroupId) => ({ userGroupId })) },
      },
      select: { id: true },
    });
    const key = await createConfirmation(tx, {
      realmId: ctx.realm.id,
      type: ConfirmationType.MULTIUSE_INVITE,
      objectId: invite.id,
      now,
      expiryDate: expiry,
    });
    await notifyInvitesChanged({ tx, events }, ctx.realm.id, ctx.user.id);
    return confirmationUrl(base, key);
  });
}

/** revoke_multiuse_invite: the link is marked revoked. */
export async function doRevokeMultiuseInvite(ctx: Ctx, inviteId: number): Promise<void> {
  requireMemberOrAdmin(ctx.user);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const invite = await accessMultiuseInviteById(tx, ctx.user, inviteId);
    await tx.multiuseInvite.update({
      where: { id: invite.id },
      data: { status: InviteStatus.REVOKED },
    });
    await notifyInvitesChanged({ tx, events }, ctx.realm.id, invite.referredById);
  });
}
