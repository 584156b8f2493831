/**
 * Named user groups (zerver/views/user_groups.py, zerver/actions/user_groups.py): creating,
 * editing, deactivating and reactivating them, and changing their members and subgroups. Each
 * change is one transaction with its `user_group` event to everyone in the organization; changes of
 * membership name `groups:<realm id>` so that cached permissions are read again.
 */
import type { RequestContext } from "../../context.ts";
import type { NamedUserGroup, Tx } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { UnitOfWork } from "../../events/index.ts";
import {
  CHANNEL_GROUP_SETTINGS,
  REALM_GROUP_SETTINGS,
  USER_GROUP_SETTINGS,
  type UserGroupSettingName,
} from "../../lib/groups/group-settings.ts";
import { can, hasGroupPermission } from "../../lib/groups/permissions.ts";
import { isStorableId } from "../../lib/ids.ts";
import {
  checkGroupSettingUpdate,
  checkUserGroupName,
  createCreatorGroup,
  deleteAnonymousGroups,
  findUserGroup,
  getSystemGroupIds,
  groupForNewSetting,
  userGroupDicts,
  type GroupSettingValue,
} from "../../lib/groups/user-groups.ts";
import { refuseNul } from "../../lib/text.ts";
import { activeUserIds, isRealmAdmin } from "../../lib/users/users.ts";
import { silentMentionSyntax } from "../../lib/messages/message-links.ts";
import {
  internalSendMessage,
  notificationBot,
  type InternalSender,
} from "../messages/internal-send.ts";
import { inTransaction } from "../transaction.ts";

type Ctx = RequestContext;

/**
 * access_user_group_for_update: never a system group; the organization's can_manage_all_groups,
 * administrators, the group's can_manage_group, or the group's own `setting` (joining, adding…).
 */
export async function accessUserGroupForUpdate(
  tx: Tx,
  ctx: Ctx,
  groupId: number,
  settings: UserGroupSettingName[],
  options: { allowDeactivated: boolean },
) {
  const group = await findUserGroup(tx, ctx.realm.id, groupId, options);
  if (group.isSystemGroup) throw new JsonableError("Insufficient permission");
  if (await canManageGroup(tx, ctx, group)) return group;
  for (const setting of settings)
    if (await hasGroupPermission(tx, ctx.user, USER_GROUP_SETTINGS[setting], group)) return group;
  throw new JsonableError("Insufficient permission");
}

async function canManageGroup(tx: Tx, ctx: Ctx, group: NamedUserGroup) {
  if (isRealmAdmin(ctx.user) || (await can(tx, ctx.user, ctx.realm, "can_manage_all_groups")))
    return true;
  return hasGroupPermission(tx, ctx.user, USER_GROUP_SETTINGS.can_manage_group, group);
}

async function checkNameAvailable(tx: Tx, realmId: number, name: string, except?: number) {
  const clash = await tx.namedUserGroup.findFirst({
    where: { realmId, name, ...(except ? { id: { not: except } } : {}) },
    select: { id: true },
  });
  if (clash) throw new JsonableError(`User group '${name}' already exists.`);
}

/** Active users of the organization, else "Invalid user ID: <id>". */
async function checkUsers(tx: Tx, realmId: number, userIds: number[]) {
  const ids = [...new Set(userIds)];
  const found = new Set(
    (
      await tx.userProfile.findMany({
        where: { realmId, isActive: true, id: { in: ids.filter(isStorableId) } },
        select: { id: true },
      })
    ).map((u) => u.id),
  );
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw new JsonableError(`Invalid user ID: ${missing}`);
  return ids;
}

/** Active named groups of the organization, else "Invalid user group ID: <id>" / "User group is deactivated.". */
async function checkSubgroups(tx: Tx, realmId: number, groupIds: number[]) {
  const ids = [...new Set(groupIds)];
  const groups = await tx.namedUserGroup.findMany({
    where: { realmId, id: { in: ids.filter(isStorableId) } },
    select: { id: true, deactivated: true },
  });
  const missing = ids.find((id) => !groups.some((g) => g.id === id));
  if (missing !== undefined) throw new JsonableError(`Invalid user group ID: ${missing}`);
  if (groups.some((g) => g.deactivated)) throw new JsonableError("User group is deactivated.");
  return ids;
}

async function groupEvent(
  { tx, events }: UnitOfWork,
  realmId: number,
  event: Record<string, unknown>,
) {
  events.add({ type: "user_group", ...event }, await activeUserIds(tx, realmId));
}

export interface NewUserGroup {
  name: string;
  description: string;
  members: number[];
  subgroups: number[];
  settings: Partial<Record<UserGroupSettingName, GroupSettingValue>>;
}

/** add_user_group: needs can_create_groups; defaults with the creator where Zulip has them. */
export async function doCreateUserGroup(ctx: Ctx, input: NewUserGroup): Promise<number> {
  if (!(await can(ctx.db, ctx.user, ctx.realm, "can_create_groups")))
    throw new JsonableError("Insufficient permission");
  const name = checkUserGroupName(input.name);
  refuseNul(input.description, "user group description");
  const realmId = ctx.realm.id;
  return inTransaction(ctx, realmId, async ({ tx, events }) => {
    await checkNameAvailable(tx, realmId, name);
    const members = await checkUsers(tx, realmId, input.members);
    const subgroups = await checkSubgroups(tx, realmId, input.subgroups);
    const system = await getSystemGroupIds(tx, realmId);
    const fields: Record<string, number> = {};
    for (const setting of Object.values(USER_GROUP_SETTINGS)) {
      const value = input.settings[setting.name];
      if (value !== undefined)
        fields[setting.field] = await groupForNewSetting(tx, events, realmId, setting, value);
      else if (setting.default === "group_creator")
        fields[setting.field] = await createCreatorGroup(tx, realmId, ctx.user.id);
      else fields[setting.field] = system[setting.default as keyof typeof system];
    }
    const base = await tx.userGroup.create({ data: { realmId }, select: { id: true } });
    await tx.namedUserGroup.create({
      data: {
        id: base.id,
        realmId,
        name,
        description: input.description,
        creatorId: ctx.user.id,
        ...fields,
      } as never,
    });
    await tx.userGroupMembership.createMany({
      data: members.map((userProfileId) => ({ userGroupId: base.id, userProfileId })),
    });
    await tx.groupGroupMembership.createMany({
      data: subgroups.map((subgroupId) => ({ supergroupId: base.id, subgroupId })),
    });
    events.invalidate(`groups:${realmId}`);
    const [group] = await userGroupDicts(tx, realmId, { includeDeactivated: true, ids: [base.id] });
    await groupEvent({ tx, events }, realmId, { op: "add", group });
    return base.id;
  });
}

export interface UserGroupUpdate {
  name?: string;
  description?: string;
  deactivated?: boolean;
  settings: Partial<
    Record<UserGroupSettingName, { new: GroupSettingValue; old?: GroupSettingValue }>
  >;
}

/** edit_user_group: a deactivated group stays editable; `deactivated=false` reactivates it, `true` does nothing. */
export async function doUpdateUserGroup(ctx: Ctx, groupId: number, input: UserGroupUpdate) {
  if (
    input.name === undefined &&
    input.description === undefined &&
    input.deactivated === undefined &&
    Object.keys(input.settings).length === 0
  )
    throw new JsonableError("No new data supplied");
  const realmId = ctx.realm.id;
  await inTransaction(ctx, realmId, async ({ tx, events }) => {
    const group = await accessUserGroupForUpdate(tx, ctx, groupId, [], { allowDeactivated: true });
    const data: Record<string, unknown> = {};
    const changed: Record<string, unknown> = {};
    if (input.deactivated === false && group.deactivated)
      data.deactivated = changed.deactivated = false;
    if (input.name !== undefined && input.name !== group.name) {
      data.name = changed.name = checkUserGroupName(input.name);
      await checkNameAvailable(tx, realmId, input.name, group.id);
    }
    if (
      input.description !== undefined &&
      refuseNul(input.description, "user group description") !== group.description
    )
      data.description = changed.description = input.description;
    const replaced: number[] = [];
    for (const [name, update] of Object.entries(input.settings)) {
      const setting = USER_GROUP_SETTINGS[name as UserGroupSettingName];
      const change = await checkGroupSettingUpdate(
        tx,
        events,
        realmId,
        setting,
        group[setting.field],
        update,
      );
      if (!change) continue;
      data[setting.field] = change.groupId;
      changed[setting.name] = change.value;
      if (change.replacedGroupId !== null) replaced.push(change.replacedGroupId);
    }
    if (Object.keys(data).length === 0) return;
    await tx.namedUserGroup.update({ where: { id: group.id }, data });
    await deleteAnonymousGroups(tx, replaced);
    if (data.deactivated !== undefined) events.invalidate(`groups:${realmId}`);
    await groupEvent({ tx, events }, realmId, { op: "update", group_id: group.id, data: changed });
  });
}

/**
 * Where a group is used: named in a setting of the organization, of a channel that is not archived
 * or of another active group, directly or as a direct subgroup of the anonymous group a setting
 * holds (check_user_group_can_be_deactivated's objections).
 */
async function groupObjections(tx: Tx, realmId: number, groupId: number) {
  const anonymous = (
    await tx.$queryRaw<{ id: number }[]>`
    SELECT g.supergroup_id AS id FROM group_group_membership g JOIN user_group u ON u.id = g.supergroup_id
    LEFT JOIN named_user_group n ON n.id = u.id WHERE g.subgroup_id = ${groupId} AND n.id IS NULL`
  ).map((r) => Number(r.id));
  const uses = new Set([groupId, ...anonymous]);
  const objections: Record<string, unknown>[] = [];
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: realmId } });
  const realmSettings = Object.values(REALM_GROUP_SETTINGS)
    .filter((s) => uses.has(realm[s.field]))
    .map((s) => s.name);
  if (realmSettings.length > 0) objections.push({ type: "realm", settings: realmSettings });
  const channels = await tx.stream.findMany({
    where: { realmId, isArchived: false },
    orderBy: { id: "asc" },
  });
  for (const channel of channels) {
    const settings = Object.values(CHANNEL_GROUP_SETTINGS)
      .filter((s) => uses.has(channel[s.field]))
      .map((s) => s.name);
    if (settings.length > 0) objections.push({ type: "channel", channel_id: channel.id, settings });
  }
  const groups = await tx.namedUserGroup.findMany({
    where: { realmId, deactivated: false, id: { not: groupId } },
    orderBy: { id: "asc" },
  });
  for (const other of groups) {
    const settings = Object.values(USER_GROUP_SETTINGS)
      .filter((s) => uses.has(other[s.field]))
      .map((s) => s.name);
    if (settings.length > 0) objections.push({ type: "user_group", group_id: other.id, settings });
  }
  return objections;
}

/** do_deactivate_user_group: refused while the group holds a permission (CANNOT_DEACTIVATE_GROUP_IN_USE). */
export async function doDeactivateUserGroup(ctx: Ctx, groupId: number) {
  const realmId = ctx.realm.id;
  await inTransaction(ctx, realmId, async ({ tx, events }) => {
    const group = await accessUserGroupForUpdate(tx, ctx, groupId, [], { allowDeactivated: false });
    const objections = await groupObjections(tx, realmId, group.id);
    if (objections.length > 0)
      throw new JsonableError("Cannot deactivate user group in use.", {
        code: "CANNOT_DEACTIVATE_GROUP_IN_USE",
        data: { objections },
      });
    await tx.namedUserGroup.update({ where: { id: group.id }, data: { deactivated: true } });
    events.invalidate(`groups:${realmId}`);
    // Both forms, as Zulip: queues with include_deactivated_groups take the update, the others
    // the removal (the queue's filter, events/queues.ts).
    await groupEvent({ tx, events }, realmId, {
      op: "update",
      group_id: group.id,
      data: { deactivated: true },
    });
    await groupEvent({ tx, events }, realmId, { op: "remove", group_id: group.id });
  });
}

/**
 * update_user_group_backend: members added and removed; adding only oneself needs can_join_group,
 * removing only oneself can_leave_group, others can_add_members_group / can_remove_members_group
 * (or managing the group).
 */
export async function doUpdateUserGroupMembers(
  ctx: Ctx,
  groupId: number,
  input: { add: number[]; delete: number[]; addSubgroups: number[]; deleteSubgroups: number[] },
) {
  if (
    input.add.length +
      input.delete.length +
      input.addSubgroups.length +
      input.deleteSubgroups.length ===
    0
  )
    throw new JsonableError(
      'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
    );
  const realmId = ctx.realm.id;
  const self = (ids: number[]) => ids.length === 1 && ids[0] === ctx.user.id;
  const bot =
    input.add.length + input.delete.length > 0 ? await notificationBot(ctx, ctx.realm) : null;
  await inTransaction(ctx, realmId, async ({ tx, events }) => {
    if (input.add.length > 0) {
      const allowed: UserGroupSettingName[] = self(input.add)
        ? ["can_join_group", "can_add_members_group"]
        : ["can_add_members_group"];
      const group = await accessUserGroupForUpdate(tx, ctx, groupId, allowed, {
        allowDeactivated: false,
      });
      const ids = await checkUsers(tx, realmId, input.add);
      const existing = await tx.userGroupMembership.findFirst({
        where: { userGroupId: group.id, userProfileId: { in: ids } },
        select: { userProfileId: true },
      });
      if (existing)
        throw new JsonableError(`User ${existing.userProfileId} is already a member of this group`);
      await tx.userGroupMembership.createMany({
        data: ids.map((userProfileId) => ({ userGroupId: group.id, userProfileId })),
      });
      await groupEvent({ tx, events }, realmId, {
        op: "add_members",
        group_id: group.id,
        user_ids: ids,
      });
      await notifyMembershipChange({ tx, events }, ctx, bot!, group, ids, "added you to");
    }
    if (input.delete.length > 0) {
      const allowed: UserGroupSettingName[] = self(input.delete)
        ? ["can_leave_group", "can_remove_members_group"]
        : ["can_remove_members_group"];
      const group = await accessUserGroupForUpdate(tx, ctx, groupId, allowed, {
        allowDeactivated: false,
      });
      const ids = [...new Set(input.delete)];
      const present = new Set(
        (
          await tx.userGroupMembership.findMany({
            where: { userGroupId: group.id, userProfileId: { in: ids.filter(isStorableId) } },
            select: { userProfileId: true },
          })
        ).map((m) => m.userProfileId),
      );
      const absent = ids.find((id) => !present.has(id));
      if (absent !== undefined)
        throw new JsonableError(`There is no member '${absent}' in this user group`);
      await tx.userGroupMembership.deleteMany({
        where: { userGroupId: group.id, userProfileId: { in: ids } },
      });
      await groupEvent({ tx, events }, realmId, {
        op: "remove_members",
        group_id: group.id,
        user_ids: ids,
      });
      await notifyMembershipChange({ tx, events }, ctx, bot!, group, ids, "removed you from");
    }
    if (input.addSubgroups.length > 0 || input.deleteSubgroups.length > 0)
      await changeSubgroups(
        { tx, events },
        ctx,
        groupId,
        input.addSubgroups,
        input.deleteSubgroups,
      );
    events.invalidate(`groups:${realmId}`);
  });
}

/**
 * notify_for_user_group_subscription_changes: Notification Bot tells each active human whom
 * someone else added or removed ("@_**Iago|2** added you to the group @_*backenders*.").
 */
async function notifyMembershipChange(
  { tx, events }: UnitOfWork,
  ctx: Ctx,
  bot: InternalSender,
  group: NamedUserGroup,
  userIds: number[],
  action: "added you to" | "removed you from",
) {
  const others = userIds.filter((id) => id !== ctx.user.id);
  if (others.length === 0) return;
  const users = await tx.userProfile.findMany({
    where: { id: { in: others }, isActive: true, isBot: false },
    select: { id: true },
    orderBy: { id: "asc" },
  });
  const content = `${silentMentionSyntax(ctx.user)} ${action} the group @_*${group.name}*.`;
  for (const user of users)
    await internalSendMessage(
      { tx, events },
      {
        deps: ctx,
        realm: ctx.realm,
        sender: bot,
        target: { kind: "direct", userIds: [user.id] },
        content,
      },
    );
}

/** Subgroups added and removed (can_manage_group); a group may never contain itself, even through others. */
async function changeSubgroups(
  { tx, events }: UnitOfWork,
  ctx: Ctx,
  groupId: number,
  add: number[],
  remove: number[],
) {
  const realmId = ctx.realm.id;
  const group = await accessUserGroupForUpdate(tx, ctx, groupId, [], { allowDeactivated: false });
  if (add.length > 0) {
    const ids = await checkSubgroups(tx, realmId, add);
    const existing = await tx.groupGroupMembership.findFirst({
      where: { supergroupId: group.id, subgroupId: { in: ids } },
      select: { subgroupId: true },
    });
    if (existing)
      throw new JsonableError(
        `User group ${existing.subgroupId} is already a subgroup of this group.`,
      );
    // The group and every group above it: none of them may become its own subgroup.
    const above = await tx.$queryRaw<{ id: number }[]>`
      WITH RECURSIVE up(id) AS (SELECT ${group.id}::int UNION SELECT g.supergroup_id FROM group_group_membership g JOIN up ON g.subgroup_id = up.id)
      SELECT id FROM up`;
    if (ids.some((id) => above.some((r) => Number(r.id) === id)))
      throw new JsonableError(
        `User group ${group.id} is already a subgroup of one of the passed subgroups.`,
      );
    await tx.groupGroupMembership.createMany({
      data: ids.map((subgroupId) => ({ supergroupId: group.id, subgroupId })),
    });
    await groupEvent({ tx, events }, realmId, {
      op: "add_subgroups",
      group_id: group.id,
      direct_subgroup_ids: ids,
    });
  }
  if (remove.length > 0) {
    const ids = [...new Set(remove)];
    const present = new Set(
      (
        await tx.groupGroupMembership.findMany({
          where: { supergroupId: group.id, subgroupId: { in: ids.filter(isStorableId) } },
          select: { subgroupId: true },
        })
      ).map((m) => m.subgroupId),
    );
    const absent = ids.find((id) => !present.has(id));
    if (absent !== undefined)
      throw new JsonableError(`User group ${absent} is not a subgroup of this group.`);
    await tx.groupGroupMembership.deleteMany({
      where: { supergroupId: group.id, subgroupId: { in: ids } },
    });
    await groupEvent({ tx, events }, realmId, {
      op: "remove_subgroups",
      group_id: group.id,
      direct_subgroup_ids: ids,
    });
  }
}

/** update_subgroups_of_user_group. */
export async function doUpdateUserGroupSubgroups(
  ctx: Ctx,
  groupId: number,
  input: { add: number[]; delete: number[] },
) {
  if (input.add.length + input.delete.length === 0)
    throw new JsonableError('Nothing to do. Specify at least one of "add" or "delete".');
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    await changeSubgroups({ tx, events }, ctx, groupId, input.add, input.delete);
    events.invalidate(`groups:${ctx.realm.id}`);
  });
}
