/**
 * Creating a user or bot: the profile with a fresh API key and a memory-hard password hash,
 * the personal recipient that direct messages to them use, their stored API email (a dummy
 * address when their real one is hidden), and their role's system-group membership.
 */
import {
  newUserSettings,
  realmUserDefaults,
} from "../../lib/realm/realm-user-settings-defaults.ts";
import { Prisma, type Realm, type Tx, type UserProfile } from "../../db/index.ts";
import { JsonableError, OrganizationAdministratorRequiredError } from "../../errors.ts";
import { checkEmailAllowedForRealm, isValidEmail } from "../../lib/email/addresses.ts";
import { generateApiKey, hashPassword, passwordStrengthProblem } from "../../lib/auth/passwords.ts";
import { subscriberLists } from "../../lib/channels/subscriptions.ts";
import { RecipientType } from "../../lib/recipients.ts";
import {
  getSystemGroupIds,
  SystemGroups,
  type SystemGroupName,
} from "../../lib/groups/user-groups.ts";
import {
  accessUserById,
  apiEmailFor,
  canSeeDeliveryEmail,
  checkFullNameInRealm,
  checkRoleChange,
  findUserByDeliveryEmail,
  avatarUrl,
  isGuest,
  isRealmAdmin,
  Role,
  toApiUser,
  activeViewers,
  activeUserIds,
  isoFormat,
} from "../../lib/users/users.ts";
import { inaccessibleUser, restrictedGuestIds } from "../../lib/access/users.ts";
import type { AppDeps, RequestContext } from "../../context.ts";
import type { PendingEvents, UnitOfWork } from "../../events/index.ts";
import { fakeEmailDomain } from "../../lib/realm/realm.ts";
import { notifyExportConsent } from "../realm/realm-export-changed.ts";
import { inTransaction } from "../transaction.ts";
import {
  channelsForViewer,
  findDefaultChannels,
  hasMetadataAccess,
  toChannelDicts,
} from "../../lib/channels/channels.ts";
import { bulkAddSubscriptions } from "../channels/subscriptions.ts";
import { doUpdateUserCustomProfileData, type ProfileDataItem } from "./custom-profile-fields.ts";

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
  /** Created by the API (POST /users): date_joined moves to the first login (feature level 475). */
  joinedAtLogin?: boolean;
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
        joinedAtLogin: input.joinedAtLogin ?? false,
        emailAddressVisibility: realm.emailAddressVisibility,
        // copy_default_settings: a human takes the organization's defaults (bots keep Zulip's).
        ...(input.isBot ? {} : newUserSettings(await realmUserDefaults(tx, realm.id))),
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
    let viewers = (await activeViewers(tx, realm.id)).filter((v) => v.id !== user.id);
    // Guests whom can_access_all_users_group leaves out learn only that somebody joined
    // (notify_created_user); they learn who once they share a conversation (actions/users/user-access.ts).
    const restricted =
      !user.isBot && viewers.some((v) => isGuest(v))
        ? await restrictedGuestIds(tx, realm)
        : new Set<number>();
    if (restricted.size) {
      viewers = viewers.filter((v) => !restricted.has(v.id));
      events.add(
        {
          type: "realm_user",
          op: "add",
          person: inaccessibleUser(user.id, fakeEmailDomain),
          inaccessible_user: true,
        },
        [...restricted],
      );
    }
    const person = toApiUser(user, user, { clientGravatar: false });
    const seeing = viewers.filter((v) => canSeeDeliveryEmail(v, user)).map((v) => v.id);
    const others = viewers.filter((v) => !canSeeDeliveryEmail(v, user)).map((v) => v.id);
    if (seeing.length) events.add({ type: "realm_user", op: "add", person }, seeing);
    if (others.length)
      events.add(
        { type: "realm_user", op: "add", person: { ...person, delivery_email: null } },
        others,
      );
    if (!user.isBot) await notifyExportConsent({ tx, events }, realm.id, user);
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
  return inTransaction(deps, realm.id, async ({ tx, events }) => {
    const user = await doCreateUser(tx, realm, input, domain, events);
    // do_create_user subscribes a new user to the organization's default channels.
    if (!user.isBot)
      await bulkAddSubscriptions(
        { tx, events },
        { realm, user: null },
        await findDefaultChannels(tx, realm.id),
        [user.id],
      );
    return user;
  });
}

/** PATCH /users/{user_id}'s changes, as parsed; absent ones are left alone. */
export interface UserUpdate {
  fullName?: string;
  role?: number;
  /** Validated and applied by doUpdateUserCustomProfileData (actions/users/custom-profile-fields.ts). */
  profileData?: ProfileDataItem[];
  newEmail?: string;
}

export type Viewer = { id: number; role: number };

/**
 * update_user_backend: the checks in Zulip's order, then every change in one transaction with its
 * events, so a refused value changes nothing. The target's row (and, for a role change, every
 * active human owner's) is locked first, in id order, so two concurrent demotions cannot leave the
 * organization without an owner.
 */
export async function doUpdateUser(ctx: RequestContext, targetId: number, input: UserUpdate) {
  const actor = ctx.user;
  const realm = ctx.realm;
  const target = await accessUserById(ctx.db, actor, targetId, {
    forAdmin: true,
    allowBots: true,
    allowDeactivated: true,
  });
  // The contract: an owner with the can_change_user_emails special permission.
  if (input.newEmail !== undefined && !(actor.canChangeUserEmails && actor.role === Role.OWNER))
    throw new JsonableError("User not authorized to change user emails");
  const domain =
    input.newEmail !== undefined ? await fakeEmailDomain(ctx.db, realm, ctx.config) : "";
  await inTransaction(ctx, realm.id, async ({ tx, events }) => {
    const locked = await tx.$queryRaw<{ id: number; role: number }[]>`
      SELECT id, role FROM user_profile
      WHERE id = ${target.id} ${
        input.role !== undefined
          ? Prisma.sql`OR (realm_id = ${realm.id} AND role = ${Role.OWNER} AND is_active AND NOT is_bot)`
          : Prisma.empty
      }
      ORDER BY id FOR UPDATE`;
    let user = { ...target, role: locked.find((r) => r.id === target.id)!.role };
    let viewers: Viewer[] | undefined;
    const audience = async () => (viewers ??= await activeViewers(tx, realm.id));

    if (input.role !== undefined && user.role !== input.role) {
      checkRoleChange(actor, user.role, input.role);
      // check_last_owner: a human owner cannot lose the role while the organization has only
      // one active human owner (Zulip counts them whether or not the target is active).
      const humanOwner = user.role === Role.OWNER && !user.isBot;
      const owners =
        locked.filter((r) => r.role === Role.OWNER && r.id !== target.id).length +
        (humanOwner && user.isActive ? 1 : 0);
      if (humanOwner && owners === 1)
        throw new JsonableError(
          "The owner permission cannot be removed from the only organization owner.",
        );
      user = await changeUserRole({ tx, events }, realm, user, input.role, await audience());
    }

    if (
      input.fullName !== undefined &&
      user.fullName !== input.fullName &&
      input.fullName.trim() !== ""
    ) {
      // name_changes_disabled does not apply: the change is an administrator's.
      const name = await checkFullNameInRealm(tx, realm, input.fullName, user.id);
      user = await tx.userProfile.update({ where: { id: user.id }, data: { fullName: name } });
      const person = { user_id: user.id, full_name: name };
      events.add(
        { type: "realm_user", op: "update", person },
        (await audience()).map((v) => v.id),
      );
      // No `realm_bot` `update` for a bot's name since feature level 474.
    }

    // Zulip's order: after full_name, before new_email.
    if (input.profileData !== undefined)
      await doUpdateUserCustomProfileData({ tx, events }, realm, actor, user, input.profileData);

    if (input.newEmail !== undefined)
      await changeDeliveryEmail(
        { tx, events },
        realm,
        user,
        input.newEmail,
        domain,
        await audience(),
      );
  });
}

/**
 * do_change_user_role: the role, the `realm_user` update to everyone, the system-group
 * memberships with their `user_group` events (the role's own group, then full members), and
 * `stream` create (with `peer_add`) / delete to the user for the channels they may now see or no
 * longer see. Memberships and the user's cached row are named stale for every process.
 */
export async function changeUserRole(
  { tx, events }: UnitOfWork,
  realm: Realm,
  user: UserProfile,
  role: number,
  viewers: Viewer[],
) {
  const before = user.isActive ? await visibleChannelRows(tx, realm, user) : null;
  const updated = await tx.userProfile.update({ where: { id: user.id }, data: { role } });
  const everyone = viewers.map((v) => v.id);
  events.add({ type: "realm_user", op: "update", person: { user_id: user.id, role } }, everyone);

  const groups = await getSystemGroupIds(tx, realm.id);
  const oldGroups = ROLE_GROUPS[user.role] ?? [];
  const newGroups = ROLE_GROUPS[role] ?? [];
  const removed = oldGroups.filter((g) => !newGroups.includes(g));
  const added = newGroups.filter((g) => !oldGroups.includes(g));
  await tx.userGroupMembership.deleteMany({
    where: { userProfileId: user.id, userGroupId: { in: removed.map((g) => groups[g]) } },
  });
  await tx.userGroupMembership.createMany({
    data: added.map((g) => ({ userGroupId: groups[g], userProfileId: user.id })),
    skipDuplicates: true,
  });
  // Zulip's order: out of the old role's group, into the new one's, then full members.
  const membership = (op: string, name: SystemGroupName) =>
    events.add({ type: "user_group", op, group_id: groups[name], user_ids: [user.id] }, everyone);
  for (const g of removed.filter((g) => g === oldGroups[0])) membership("remove_members", g);
  for (const g of added.filter((g) => g === newGroups[0])) membership("add_members", g);
  for (const g of removed.filter((g) => g !== oldGroups[0])) membership("remove_members", g);
  for (const g of added.filter((g) => g !== newGroups[0])) membership("add_members", g);
  events.invalidate(`groups:${realm.id}`);
  events.invalidate(`user:${user.id}`);

  if (before) {
    const after = await visibleChannelRows(tx, realm, updated);
    const was = new Set(before.map((s) => s.id));
    const is = new Set(after.map((s) => s.id));
    const gained = after.filter((s) => !was.has(s.id));
    const lost = before.filter((s) => !is.has(s.id));
    if (gained.length > 0) {
      events.add({ type: "stream", op: "create", streams: await toChannelDicts(tx, gained) }, [
        user.id,
      ]);
      const lists = await subscriberLists(
        tx,
        realm.id,
        gained.map((s) => s.recipientId!),
        "full",
      );
      for (const s of gained) {
        const list = lists.get(s.recipientId!);
        const subscribers = list && "subscribers" in list ? list.subscribers : [];
        if (subscribers.length > 0)
          events.add(
            { type: "subscription", op: "peer_add", stream_ids: [s.id], user_ids: subscribers },
            [user.id],
          );
      }
    }
    if (lost.length > 0)
      events.add(
        {
          type: "stream",
          op: "delete",
          streams: lost.map((s) => ({ stream_id: s.id, name: s.name })),
          stream_ids: lost.map((s) => s.id),
        },
        [user.id],
      );
  }
  return updated;
}

/** The channels whose existence the user may see (get_streams_for_user with include_all), read in `tx`. */
async function visibleChannelRows(tx: Tx, realm: Realm, user: UserProfile) {
  const { rows, groups } = await channelsForViewer(tx, realm, user);
  return rows.filter((s) => hasMetadataAccess(user, s, s.subscribed, groups));
}

/**
 * do_change_user_delivery_email, after validate_email and validate_email_not_already_in_realm:
 * the new address to those who may see it, the Gravatar that follows it to everyone, and the new
 * API email to everyone when the address is the API email.
 */
export async function changeDeliveryEmail(
  { tx, events }: UnitOfWork,
  realm: Realm,
  user: UserProfile,
  newEmail: string,
  domain: string,
  viewers: Viewer[],
) {
  if (!isValidEmail(newEmail)) throw new JsonableError("Invalid new email address.");
  const existing = await findUserByDeliveryEmail(tx, realm.id, newEmail);
  const inUse = (active: boolean) =>
    new JsonableError(
      `New email value error: ${active ? "Already has an account." : "Account has been deactivated."}`,
    );
  if (existing) throw inUse(existing.isActive);
  const updated = await tx.userProfile
    .update({
      where: { id: user.id },
      data: {
        deliveryEmail: newEmail,
        email: apiEmailFor({ ...user, deliveryEmail: newEmail }, domain),
      },
    })
    .catch((e: unknown) => {
      // A concurrent change to the same address is caught by the case-insensitive unique index.
      if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002")
        throw inUse(true);
      throw e;
    });
  const everyone = viewers.map((v) => v.id);
  events.add(
    { type: "realm_user", op: "update", person: { user_id: user.id, delivery_email: newEmail } },
    viewers.filter((v) => canSeeDeliveryEmail(v, updated)).map((v) => v.id),
  );
  // notify_avatar_url_change: the Gravatar follows the address (for bots too only through
  // `realm_user` since feature level 474).
  if (updated.avatarSource === "G")
    events.add(
      {
        type: "realm_user",
        op: "update",
        person: {
          avatar_source: updated.avatarSource,
          avatar_url: avatarUrl(updated),
          avatar_url_medium: avatarUrl(updated, true),
          avatar_version: updated.avatarVersion,
          user_id: user.id,
        },
      },
      everyone,
    );
  if (updated.email !== user.email)
    events.add(
      { type: "realm_user", op: "update", person: { user_id: user.id, new_email: updated.email } },
      everyone,
    );
}

/**
 * create_user_backend (POST /users): an administrator with can_create_users, the checks in
 * Zulip's order, then the user with their default channels in one transaction.
 */
export async function doCreateUserByAdmin(
  ctx: RequestContext,
  input: { email: string; password: string; fullName: string },
): Promise<number> {
  if (!isRealmAdmin(ctx.user)) throw new OrganizationAdministratorRequiredError();
  if (!ctx.user.canCreateUsers) throw new JsonableError("User not authorized to create users");
  const fullName = await checkFullNameInRealm(ctx.db, ctx.realm, input.fullName, null);
  if (!isValidEmail(input.email)) throw new JsonableError("Bad name or username");
  await checkEmailAllowedForRealm(ctx.db, ctx.realm, input.email);
  if (await findUserByDeliveryEmail(ctx.db, ctx.realm.id, input.email))
    throw new JsonableError(`Email '${input.email}' already in use`);
  const problem = await passwordStrengthProblem(input.password, ctx.config);
  if (problem) throw new JsonableError(problem);
  const user = await doCreateUserWithDefaultChannels(ctx, ctx.realm, {
    email: input.email,
    fullName,
    role: Role.MEMBER,
    passwordHash: await hashPassword(input.password),
    joinedAtLogin: true,
  });
  return user.id;
}

/**
 * A successful login (POST /fetch_api_key, the login form): for a user created by the API whose
 * first login this is, date_joined becomes now, with `realm_user` `update` to everyone (feature
 * level 475). Nothing to do, and no statement, for anyone else.
 */
export async function doRecordLogin(
  deps: Pick<AppDeps, "db" | "events">,
  user: Pick<UserProfile, "id" | "realmId" | "joinedAtLogin">,
): Promise<void> {
  if (!user.joinedAtLogin) return;
  await inTransaction(deps, user.realmId, async ({ tx, events }) => {
    const [row] = await tx.$queryRaw<{ date_joined: Date }[]>`
      UPDATE user_profile SET date_joined = now(), date_joined_at_login = false
      WHERE id = ${user.id} AND date_joined_at_login RETURNING date_joined`;
    // A concurrent login already moved it.
    if (!row) return;
    events.invalidate(`user:${user.id}`);
    events.add(
      {
        type: "realm_user",
        op: "update",
        person: { user_id: user.id, date_joined: isoFormat(row.date_joined) },
      },
      await activeUserIds(tx, user.realmId),
    );
  });
}
