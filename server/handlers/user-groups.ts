/** The user-group operations (zerver/views/user_groups.py). Guests may use none of the changes. */
import {
  doCreateUserGroup,
  doDeactivateUserGroup,
  doUpdateUserGroupMembers,
  doUpdateUserGroupSubgroups,
  doUpdateUserGroup,
} from "../actions/groups/user-groups.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { USER_GROUP_SETTINGS, type UserGroupSettingName } from "../lib/groups/group-settings.ts";
import {
  findUserGroup,
  userGroupDicts,
  userGroupMemberIds,
  userGroupSubgroupIds,
  type GroupSettingValue,
} from "../lib/groups/user-groups.ts";
import { findActiveUser, requireMemberOrAdmin } from "../lib/users/users.ts";

function settingsOf<T>(body: Record<string, unknown>): Partial<Record<UserGroupSettingName, T>> {
  const out: Partial<Record<UserGroupSettingName, T>> = {};
  for (const name of Object.keys(USER_GROUP_SETTINGS) as UserGroupSettingName[])
    if (body[name] !== undefined) out[name] = body[name] as T;
  return out;
}

export const getUserGroups: Handler<"get-user-groups"> = async ({ query }, ctx) => ({
  user_groups: await userGroupDicts(ctx.db, ctx.realm.id, {
    includeDeactivated: query.include_deactivated_groups ?? false,
  }),
});

export const createUserGroup: Handler<"create-user-group"> = async ({ body }, ctx) => {
  requireMemberOrAdmin(ctx.user);
  const groupId = await doCreateUserGroup(ctx, {
    name: body.name,
    description: body.description,
    members: body.members,
    subgroups: body.subgroups ?? [],
    settings: settingsOf<GroupSettingValue>(body),
  });
  return { group_id: groupId };
};

export const updateUserGroup: Handler<"update-user-group"> = async ({ path, body }, ctx) => {
  requireMemberOrAdmin(ctx.user);
  await doUpdateUserGroup(ctx, path.user_group_id, {
    name: body.name,
    description: body.description,
    deactivated: body.deactivated,
    settings: settingsOf(body),
  });
  return {};
};

export const deactivateGroup: Handler<"deactivate-user-group"> = async ({ path }, ctx) => {
  requireMemberOrAdmin(ctx.user);
  await doDeactivateUserGroup(ctx, path.user_group_id);
  return {};
};

export const updateUserGroupMembers: Handler<"update-user-group-members"> = async (
  { path, body },
  ctx,
) => {
  requireMemberOrAdmin(ctx.user);
  await doUpdateUserGroupMembers(ctx, path.user_group_id, {
    add: body.add ?? [],
    delete: body.delete ?? [],
    addSubgroups: body.add_subgroups ?? [],
    deleteSubgroups: body.delete_subgroups ?? [],
  });
  return {};
};

export const updateUserGroupSubgroups: Handler<"update-user-group-subgroups"> = async (
  { path, body },
  ctx,
) => {
  requireMemberOrAdmin(ctx.user);
  await doUpdateUserGroupSubgroups(ctx, path.user_group_id, {
    add: body.add ?? [],
    delete: body.delete ?? [],
  });
  return {};
};

/** Members of a group: direct, or through every subgroup. */
async function members(
  ctx: Parameters<Handler<"get-user-group-members">>[1],
  groupId: number,
  directOnly: boolean,
) {
  const group = await findUserGroup(ctx.db, ctx.realm.id, groupId, { allowDeactivated: true });
  return userGroupMemberIds(ctx.db, ctx.realm.id, group.id, directOnly);
}

export const getUserGroupMembers: Handler<"get-user-group-members"> = async (
  { path, query },
  ctx,
) => ({
  members: await members(ctx, path.user_group_id, query.direct_member_only ?? false),
});

export const getUserGroupSubgroups: Handler<"get-user-group-subgroups"> = async (
  { path, query },
  ctx,
) => {
  const group = await findUserGroup(ctx.db, ctx.realm.id, path.user_group_id, {
    allowDeactivated: true,
  });
  return {
    subgroups: await userGroupSubgroupIds(ctx.db, group.id, query.direct_subgroup_only ?? false),
  };
};

export const getIsUserGroupMember: Handler<"get-is-user-group-member"> = async (
  { path, query },
  ctx,
) => {
  const userId = path.user_id;
  const user = await findActiveUser(ctx.db, ctx.realm.id, userId);
  if (!user) throw new JsonableError("No such user");
  return {
    is_user_group_member: (
      await members(ctx, path.user_group_id, query.direct_member_only ?? false)
    ).includes(user.id),
  };
};
