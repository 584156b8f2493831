/**
 * Joining an organization through a sign-up link (zerver/views/registration.py accounts_register
 * and maybe_send_to_registration, zerver/actions/create_user.py do_create_user and
 * process_new_human_user):
 * - doSignUp: the account of an invitation (or of an address confirmed through an invitation
 *   link), in one transaction with everything that follows from it;
 * - doRequestSignUpEmail: an invitation link anyone may use asks for an address, and the address
 *   gets a confirmation email whose link opens the account form.
 */
import type { AppDeps } from "../../context.ts";
import type { Realm, Tx, UserProfile } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { findChannelsById, findDefaultChannels } from "../../lib/channels/channels.ts";
import {
  ConfirmationType,
  confirmationUrl,
  createConfirmation,
  InviteStatus,
} from "../../lib/invites/confirmations.ts";
import { escapeAttr, escapeText } from "../../lib/markdown/text.ts";
import { silentMentionSyntax } from "../../lib/messages/message-links.ts";
import { hashPassword } from "../../lib/auth/passwords.ts";
import { fakeEmailDomain, realmUrl } from "../../lib/realm/realm.ts";
import { getSystemGroupIds } from "../../lib/groups/user-groups.ts";
import {
  activeUserIds,
  checkFullNameInRealm,
  findUserByDeliveryEmail,
} from "../../lib/users/users.ts";
import { queueEmail } from "../email/outbox.ts";
import {
  internalSendMessage,
  notificationBot,
  type InternalSender,
} from "../messages/internal-send.ts";
import { notifyInvitesChanged } from "./invites-changed.ts";
import { sendInitialDirectMessages, welcomeBot } from "../users/onboarding.ts";
import { bulkAddSubscriptions } from "../channels/subscriptions.ts";
import { inTransaction } from "../transaction.ts";
import { doCreateUser, ROLE_GROUPS } from "../users/users.ts";

type Deps = Pick<AppDeps, "db" | "events" | "config" | "now">;

/** The link was used or revoked while the form was open: the "expired" page, nothing created. */
export class SignUpLinkGone extends Error {
  constructor() {
    super("The confirmation link has expired or been deactivated.");
    this.name = "SignUpLinkGone";
  }
}

/** Zulip's CONFIRMATION_LINK_DEFAULT_VALIDITY_DAYS: an address confirmation is good for a day. */
const REGISTRATION_LINK_VALIDITY_MS = 24 * 60 * 60 * 1000;

/**
 * get_existing_user_errors for one address: an active account "already has an account", a
 * deactivated one "has been deactivated".
 */
async function checkAddressFree(db: Tx | Deps["db"], realmId: number, email: string) {
  const existing = await findUserByDeliveryEmail(db, realmId, email);
  if (existing?.isActive) throw new JsonableError(`${email} already has an account`);
  if (existing) throw new JsonableError("Account has been deactivated.");
}

export interface SignUpInput {
  /** Already checked by the form (lib/users/users.ts checkFullName); checked again against the organization here. */
  fullName: string;
  password: string;
}

/**
 * Creates the account of the pending PreregistrationUser `preregId`. Throws SignUpLinkGone if
 * it is no longer pending, JsonableError for an address in use or a name the organization
 * refuses; either way nothing is written.
 */
export async function doSignUp(
  deps: Deps,
  realm: Realm,
  preregId: number,
  input: SignUpInput,
): Promise<UserProfile> {
  // Slow or separate work first: the hash (memory-hard on purpose), the internal bots (created
  // on first use, in transactions of their own) and the organization's address.
  const passwordHash = await hashPassword(input.password);
  const domain = await fakeEmailDomain(deps.db, realm, deps.config);
  const notifier = await notificationBot(deps, realm);
  const welcomer = await welcomeBot(deps, realm);
  const url = await realmUrl(deps.db, realm, deps.config);

  return inTransaction(deps, realm.id, async ({ tx, events }) => {
    // The row is locked first, so of two submissions of one link exactly one creates an account.
    await tx.$queryRaw`SELECT id FROM preregistration_user WHERE id = ${preregId} FOR UPDATE`;
    const prereg = await tx.preregistrationUser.findUnique({
      where: { id: preregId },
      include: {
        streams: { select: { streamId: true } },
        groups: { select: { userGroupId: true } },
        referredBy: { select: { id: true, isActive: true } },
      },
    });
    if (!prereg || prereg.realmId !== realm.id || prereg.status !== InviteStatus.PENDING)
      throw new SignUpLinkGone();
    await checkAddressFree(tx, realm.id, prereg.email);
    const fullName = await checkFullNameInRealm(tx, realm, input.fullName, null);

    const user = await doCreateUser(
      tx,
      realm,
      { email: prereg.email, fullName, role: prereg.invitedAs, passwordHash },
      domain,
      events,
    );

    await addToGroups(
      { tx, events },
      realm.id,
      user.id,
      prereg.invitedAs,
      prereg.groups.map((g) => g.userGroupId),
    );

    // set_up_streams_for_new_human_user: exactly the invited channels, plus the default ones
    // when the invitation says so.
    const invited = await findChannelsById(
      tx,
      realm.id,
      prereg.streams.map((s) => s.streamId),
    );
    const defaults = prereg.includeRealmDefaultSubscriptions
      ? await findDefaultChannels(tx, realm.id)
      : [];
    const channels = [...new Map([...invited, ...defaults].map((c) => [c.id, c])).values()]
      .filter((c) => !c.isArchived)
      .sort((a, b) => a.id - b.id);
    await bulkAddSubscriptions({ tx, events }, { realm, user: null }, channels, [user.id]);

    if (prereg.referredBy?.isActive && prereg.notifyReferrerOnJoin)
      await internalSendMessage(
        { tx, events },
        {
          deps,
          realm,
          sender: notifier,
          target: { kind: "direct", userIds: [prereg.referredBy.id] },
          content: `${silentMentionSyntax(user)} accepted your invitation to join Zulip!`,
        },
      );

    // This invitation is used; every other one to the same address is revoked.
    await tx.preregistrationUser.update({
      where: { id: prereg.id },
      data: { status: InviteStatus.USED, createdUserId: user.id },
    });
    await tx.preregistrationUser.updateMany({
      where: {
        realmId: realm.id,
        email: { equals: prereg.email, mode: "insensitive" },
        id: { not: prereg.id },
      },
      data: { status: InviteStatus.REVOKED },
    });
    if (prereg.referredById !== null)
      await notifyInvitesChanged({ tx, events }, realm.id, prereg.referredById);

    await announceSignUp({ tx, events }, deps, realm, notifier, user);

    // The invitation's text (null: the organization's; "": none).
    const customText = prereg.welcomeMessageCustomText ?? realm.welcomeMessageCustomText;
    await sendInitialDirectMessages({ tx, events }, deps, realm, welcomer, user, url, customText);
    return user;
  });
}

/**
 * The new user's groups: the role's system groups (doCreateUser wrote those memberships) and
 * the invitation's groups that are still active, with Zulip's `user_group` `add_members` event
 * for each to every active user.
 */
async function addToGroups(
  { tx, events }: UnitOfWork,
  realmId: number,
  userId: number,
  role: number,
  invitedGroupIds: number[],
) {
  const system = await getSystemGroupIds(tx, realmId);
  const roleGroups = (ROLE_GROUPS[role] ?? []).map((name) => system[name]);
  const invited = invitedGroupIds.length
    ? (
        await tx.namedUserGroup.findMany({
          where: { id: { in: invitedGroupIds }, realmId, deactivated: false },
          select: { id: true },
          orderBy: { id: "asc" },
        })
      ).map((g) => g.id)
    : [];
  const extra = invited.filter((id) => !roleGroups.includes(id));
  if (extra.length)
    await tx.userGroupMembership.createMany({
      data: extra.map((userGroupId) => ({ userGroupId, userProfileId: userId })),
      skipDuplicates: true,
    });
  const everyone = await activeUserIds(tx, realmId);
  for (const groupId of [...roleGroups, ...extra])
    events.add(
      { type: "user_group", op: "add_members", group_id: groupId, user_ids: [userId] },
      everyone,
    );
  events.invalidate(`groups:${realmId}`);
}

/** notify_new_user: "… joined this organization." in the signup announcements channel, if any. */
async function announceSignUp(
  { tx, events }: UnitOfWork,
  deps: Deps,
  realm: Realm,
  notifier: InternalSender,
  user: UserProfile,
) {
  if (realm.signupAnnouncementsStreamId === null) return;
  const [channel] = await findChannelsById(tx, realm.id, [realm.signupAnnouncementsStreamId]);
  if (!channel || channel.isArchived) return;
  await internalSendMessage(
    { tx, events },
    {
      deps,
      realm,
      sender: notifier,
      target: { kind: "channel", streamId: channel.id, topic: "signups" },
      content: `${silentMentionSyntax(user)} joined this organization.`,
    },
  );
}

/**
 * maybe_send_to_registration for an invitation link: a PreregistrationUser for `email` that
 * takes the link's role, channels and groups, and the confirmation email with its own link
 * (type USER_REGISTRATION, good for a day), queued in the same transaction. Throws
 * SignUpLinkGone if the link was revoked meanwhile, JsonableError if the address has an account.
 */
export async function doRequestSignUpEmail(
  deps: Deps,
  realm: Realm,
  inviteId: number,
  email: string,
): Promise<void> {
  const url = await realmUrl(deps.db, realm, deps.config);
  await inTransaction(deps, realm.id, async ({ tx }) => {
    const invite = await tx.multiuseInvite.findUnique({
      where: { id: inviteId },
      include: {
        streams: { select: { streamId: true } },
        groups: { select: { userGroupId: true } },
      },
    });
    if (!invite || invite.realmId !== realm.id || invite.status === InviteStatus.REVOKED)
      throw new SignUpLinkGone();
    await checkAddressFree(tx, realm.id, email);
    const now = deps.now();
    const prereg = await tx.preregistrationUser.create({
      data: {
        realmId: realm.id,
        email,
        invitedAs: invite.invitedAs,
        includeRealmDefaultSubscriptions: invite.includeRealmDefaultSubscriptions,
        multiuseInviteId: invite.id,
        welcomeMessageCustomText: invite.welcomeMessageCustomText,
        invitedAt: now,
        streams: { create: invite.streams.map((s) => ({ streamId: s.streamId })) },
        groups: { create: invite.groups.map((g) => ({ userGroupId: g.userGroupId })) },
      },
      select: { id: true },
    });
    const key = await createConfirmation(tx, {
      realmId: realm.id,
      type: ConfirmationType.USER_REGISTRATION,
      objectId: prereg.id,
      now,
      expiryDate: new Date(now.getTime() + REGISTRATION_LINK_VALIDITY_MS),
    });
    const link = confirmationUrl(url, key);
    await queueEmail(tx, {
      realmId: realm.id,
      to: email,
      subject: "Activate your Zulip account",
      text:
        "Hello there.\n\nYou recently signed up for Zulip. Awesome!\n\n" +
        `To complete signup, visit this link below:\n    <${link}>\n\n` +
        `If you did not ask to join ${realm.name}, you can ignore this email.\n\nCheers,\n\nThe Zulip Team\n`,
      html:
        "<p>Hello there.</p><p>You recently signed up for Zulip. Awesome!</p>" +
        `<p>To complete signup, visit this link below:<br><a href="${escapeAttr(link)}">${escapeText(link)}</a></p>` +
        `<p>If you did not ask to join ${escapeText(realm.name)}, you can ignore this email.</p>` +
        "<p>Cheers,<br>The Zulip Team</p>",
      template: "zerver/emails/confirm_registration",
    });
  });
}
