/**
 * Creating a user or bot: the profile with a fresh API key and a memory-hard password hash,
 * the personal recipient that direct messages to them use, their stored API email (a dummy
 * address when their real one is hidden), and their role's system-group membership.
 */
import { Prisma, type Realm, type Tx } from "../db.ts";
import { JsonableError } from "../errors.ts";
import { generateApiKey } from "../lib/passwords.ts";
import { RecipientType } from "../lib/recipients.ts";
import { getSystemGroupIds, SystemGroups, type SystemGroupName } from "../lib/user-groups.ts";
import {
  apiEmailFor,
  canSeeDeliveryEmail,
  findUserByDeliveryEmail,
  Role,
  toApiUser,
} from "../lib/users.ts";
import type { AppDeps } from "../context.ts";
import type { PendingEvents } from "../events/index.ts";
import { fakeEmailDomain } from "../lib/realms.ts";
import { inTransaction } from "./transaction.ts";
import { findDefaultChannels } from "../lib/channels.ts";
import { bulkAddSubscriptions } from "./subscriptions.ts";

export const ROLE_GROUPS: Record<number, SystemGroupName[]> = {
  [Role.OWNER]: [SystemGroups.OWNERS],
  [Role.ADMINISTRATOR]: [SystemGroups.ADMINISTRATORS],
  [Role.MODERATOR]: [SystemGroups.MODERATORS],
  // The waiting period is 0 here, so every member is a full member at once.
  [Role.MEMBER]: [SystemGroups.MEMBERS, SystemGroups.FULL_MEMBERS],
  [Role.GUEST]: [SystemGroups.EVERYONE],
};

export interface NewUser {
  email: string;
  fullName: string;
  role: number;
  /** Already hashed with hashPassword() (hash outside the transaction: it is slow on purpose). */
  passwordHash?: string | null;
  isBot?: boolean;
  botType?: number | null;
  botOwnerId?: number | null;
  timezone?: string;
}

/**
 * Creates the user inside the caller's transaction. With `events` (a running organization), the
 * organization's users hear of them: a `realm_user` `add` event (Zulip's notify_created_user),
 * with the real email only for those who may see it. Creating an organization's first users
 * (create-realm, populate-db) has nobody to tell.
 */
export async function doCreateUser(
  tx: Tx,
  realm: Realm,
  input: NewUser,
  fakeEmailDomain: string,
  events?: PendingEvents,
) {
  const email = input.email.trim();
  const inUse = () => new JsonableError(`Email '${email}' already in use`);
  if (await findUserByDeliveryEmail(tx, realm.id, email)) throw inUse();
  // A concurrent creation of the same address is caught by the case-insensitive unique index.
  const created = await tx.userProfile
    .create({
      data: {
        realmId: realm.id,
        // Placeholder until the id is known; replaced below in the same transaction.
        email,
        deliveryEmail: email,
        fullName: input.fullName.trim(),
        role: input.role,
        isBot: input.isBot ?? false,
        botType: input.botType ?? null,
        botOwnerId: input.botOwnerId ?? null,
        apiKey: generateApiKey(),
        passwordHash: input.passwordHash ?? null,
        timezone: input.timezone ?? "",
        emailAddressVisibility: realm.emailAddressVisibility,
      },
    })
    .catch((e: unknown) => {
      if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") throw inUse();
      throw e;
    });
  const recipient = await tx.recipient.create({
    data: { realmId: realm.id, type: RecipientType.PERSONAL, typeId: created.id },
  });
  const user = await tx.userProfile.update({
    where: { id: created.id },
    data: { recipientId: recipient.id, email: apiEmailFor(created, fakeEmailDomain) },
  });
  const groups = await getSystemGroupIds(tx, realm.id);
  await tx.userGroupMembership.createMany({
    data: (ROLE_GROUPS[input.role] ?? []).map((name) => ({
      userGroupId: groups[name],
      userProfileId: user.id,
    })),
  });
  if (events) {
    events.invalidate(`groups:${realm.id}`);
    const viewers = await tx.userProfile.findMany({
      where: { realmId: realm.id, isActive: true, id: { not: user.id } },
      select: { id: true, role: true },
    });
    const person = toApiUser(user, user, { clientGravatar: false });
    const seeing = viewers.filter((v) => canSeeDeliveryEmail(v, user)).map((v) => v.id);
    const others = viewers.filter((v) => !canSeeDeliveryEmail(v, user)).map((v) => v.id);
    if (seeing.length) events.add({ type: "realm_user", op: "add", person }, seeing);
    if (others.length)
      events.add(
        { type: "realm_user", op: "add", person: { ...person, delivery_email: null } },
        others,
      );
  }
  return user;
}

/** A new user of a running organization (the admin CLI's create-user): one transaction, its event logged in it. */
export async function doCreateUserWithDefaultChannels(
  deps: Pick<AppDeps, "db" | "events" | "config">,
  realm: Realm,
  input: NewUser,
) {
  const domain = await fakeEmailDomain(deps.db, realm, deps.config);
  return inTransaction(deps, realm.id, async (tx, events) => {
    const user = await doCreateUser(tx, realm, input, domain, events);
    // do_create_user subscribes a new user to the organization's default channels.
    if (!user.isBot)
      await bulkAddSubscriptions(
        tx,
        events,
        { realm, user: null },
        await findDefaultChannels(tx, realm.id),
        [user.id],
      );
    return user;
  });
}
