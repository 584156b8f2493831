/**
 * GET/POST /invites, POST /invites/multiuse, DELETE /invites/{invite_id}, POST
 * /invites/{invite_id}/resend, DELETE /invites/multiuse/{invite_id} (zerver/views/invite.py).
 */
import {
  doCreateMultiuseInvite,
  doInviteUsers,
  doResendInvite,
  doRevokeInvite,
  doRevokeMultiuseInvite,
} from "../actions/invites/invites.ts";
import type { Handler } from "../http/types.ts";
import { InvitationError, invitesControlledBy } from "../lib/invites/invites.ts";
import { requireMemberOrAdmin } from "../lib/users/users.ts";

export const getInvites: Handler<"get-invites"> = async (_req, ctx) => {
  requireMemberOrAdmin(ctx.user);
  return { invites: await invitesControlledBy(ctx, ctx.now()) };
};

export const sendInvites: Handler<"send-invites"> = async ({ body }, ctx) => {
  const skipped = await doInviteUsers(ctx, body.invitee_emails, {
    expiresInMinutes: body.invite_expires_in_minutes,
    invitedAs: body.invite_as ?? 400,
    streamIds: body.stream_ids,
    groupIds: body.group_ids ?? [],
    includeRealmDefaultSubscriptions: body.include_realm_default_subscriptions ?? false,
    notifyReferrerOnJoin: body.notify_referrer_on_join ?? true,
    welcomeMessageCustomText: body.welcome_message_custom_text,
  });
  // The others were invited (committed); the skipped ones are answered as Zulip does.
  if (skipped.length)
    throw new InvitationError(
      "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
      skipped,
      { sentInvitations: true },
    );
  return {};
};

export const createInviteLink: Handler<"create-invite-link"> = async ({ body }, ctx) => ({
  invite_link: await doCreateMultiuseInvite(ctx, {
    expiresInMinutes: body?.invite_expires_in_minutes,
    invitedAs: body?.invite_as ?? 400,
    streamIds: body?.stream_ids ?? [],
    groupIds: body?.group_ids ?? [],
    includeRealmDefaultSubscriptions: body?.include_realm_default_subscriptions ?? false,
    welcomeMessageCustomText: body?.welcome_message_custom_text,
  }),
});

export const revokeEmailInvite: Handler<"revoke-email-invite"> = async ({ path }, ctx) => {
  await doRevokeInvite(ctx, path.invite_id);
  return {};
};

export const resendEmailInvite: Handler<"resend-email-invite"> = async ({ path }, ctx) => {
  await doResendInvite(ctx, path.invite_id);
  return {};
};

export const revokeInviteLink: Handler<"revoke-invite-link"> = async ({ path }, ctx) => {
  await doRevokeMultiuseInvite(ctx, path.invite_id);
  return {};
};
