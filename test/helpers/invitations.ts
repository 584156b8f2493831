/**
 * Invitations written straight to the database, as POST /invites and POST /invites/multiuse
 * write them (a PreregistrationUser or MultiuseInvite with its channels and groups, and its
 * confirmation key), for tests of what a link does once it exists.
 */
import { ConfirmationType, createConfirmation } from "../../server/lib/invites/confirmations.ts";
import { Role } from "../../server/lib/users/users.ts";
import type { TestServer } from "./server.ts";

export interface TestInvitation {
  email: string;
  referredBy?: string | null;
  invitedAs?: number;
  streamIds?: number[];
  groupIds?: number[];
  includeRealmDefaultSubscriptions?: boolean;
  notifyReferrerOnJoin?: boolean;
  welcomeMessageCustomText?: string | null;
  /** Minutes from now; null never expires; negative ones are already expired. */
  expiresInMinutes?: number | null;
}

const expiry = (now: Date, minutes: number | null | undefined) =>
  minutes === null ? null : new Date(now.getTime() + (minutes ?? 14400) * 60_000);

/** An email invitation; returns its row id, key and the `/join/<key>/` URL on the test server. */
export async function createInvitation(server: TestServer, input: TestInvitation) {
  const realmId = server.creds.realm.id;
  const now = new Date();
  const referrer = input.referredBy === undefined ? "iago" : input.referredBy;
  return server.deps.db.$transaction(async (tx) => {
    const prereg = await tx.preregistrationUser.create({
      data: {
        realmId,
        email: input.email,
        referredById: referrer === null ? null : server.creds.users[referrer]!.user_id,
        invitedAs: input.invitedAs ?? Role.MEMBER,
        includeRealmDefaultSubscriptions: input.includeRealmDefaultSubscriptions ?? false,
        notifyReferrerOnJoin: input.notifyReferrerOnJoin ?? true,
        welcomeMessageCustomText: input.welcomeMessageCustomText ?? null,
        invitedAt: now,
        expiryDate: expiry(now, input.expiresInMinutes),
        streams: { create: (input.streamIds ?? []).map((streamId) => ({ streamId })) },
        groups: { create: (input.groupIds ?? []).map((userGroupId) => ({ userGroupId })) },
      },
    });
    const key = await createConfirmation(tx, {
      realmId,
      type: ConfirmationType.INVITATION,
      objectId: prereg.id,
      now,
      expiryDate: expiry(now, input.expiresInMinutes),
    });
    return { id: prereg.id, key, url: `${server.baseUrl}/join/${key}/` };
  });
}

/** An invitation link anyone may use. */
export async function createMultiuseInvite(
  server: TestServer,
  input: Omit<TestInvitation, "email" | "notifyReferrerOnJoin">,
) {
  const realmId = server.creds.realm.id;
  const now = new Date();
  const referrer = input.referredBy === undefined ? "iago" : input.referredBy;
  return server.deps.db.$transaction(async (tx) => {
    const invite = await tx.multiuseInvite.create({
      data: {
        realmId,
        referredById: referrer === null ? null : server.creds.users[referrer]!.user_id,
        invitedAs: input.invitedAs ?? Role.MEMBER,
        includeRealmDefaultSubscriptions: input.includeRealmDefaultSubscriptions ?? false,
        welcomeMessageCustomText: input.welcomeMessageCustomText ?? null,
        createdAt: now,
        expiryDate: expiry(now, input.expiresInMinutes),
        streams: { create: (input.streamIds ?? []).map((streamId) => ({ streamId })) },
        groups: { create: (input.groupIds ?? []).map((userGroupId) => ({ userGroupId })) },
      },
    });
    const key = await createConfirmation(tx, {
      realmId,
      type: ConfirmationType.MULTIUSE_INVITE,
      objectId: invite.id,
      now,
      expiryDate: expiry(now, input.expiresInMinutes),
    });
    return { id: invite.id, key, url: `${server.baseUrl}/join/${key}/` };
  });
}
