import { doCreateUserByAdmin, doUpdateUser } from "../actions/users/users.ts";
import type { Handler } from "../http/types.ts";
import {
  accessUserForRead,
  checkAccessible,
  formatForViewer,
  userAccessSql,
  viewerAccess,
} from "../lib/access/users.ts";
import { fakeEmailDomain } from "../lib/realm/realm.ts";
import {
  accessUserByEmail,
  loadOwnUserExtras,
  profileDataOf,
  realmUsers,
  toApiUser,
} from "../lib/users/users.ts";

/**
 * GET /users: every user of the organization, deactivated ones and bots included; those the
 * caller may not access (lib/access/users.ts) as "Unknown user".
 */
export const getUsers: Handler<"get-users"> = async ({ query }, ctx) => {
  const withProfile = query.include_custom_profile_fields ?? false;
  const access = await viewerAccess(ctx.db, ctx.user, ctx.realm);
  const users = await realmUsers(ctx.db, ctx.realm.id, {
    ids: query.user_ids,
    profileData: withProfile,
    accessible: userAccessSql(access, "u"),
  });
  const profileData = withProfile ? profileDataOf(users) : undefined;
  return {
    members: await formatForViewer(
      users,
      (u) => toApiUser(u, ctx.user, { clientGravatar: query.client_gravatar ?? true, profileData }),
      () => fakeEmailDomain(ctx.db, ctx.realm, ctx.config),
    ),
  };
};

/** GET /users/me: the caller, with the real email and custom profile data. */
export const getOwnUser: Handler<"get-own-user"> = async (_input, ctx) => {
  const { maxMessageId, profileData } = await loadOwnUserExtras(ctx.db, ctx.realm.id, ctx.user.id);
  const user = toApiUser(ctx.user, ctx.user, {
    clientGravatar: false,
    profileData: ctx.user.isBot ? undefined : new Map([[ctx.user.id, profileData]]),
  });
  return { ...user, max_message_id: maxMessageId };
};

/**
 * GET /users/{email} (zerver/views/users.py get_user_by_email) and GET /users/{user_id}
 * (get_members_backend), which share the path: a numeric segment is a user ID.
 */
export const getUserByEmail: Handler<"get-user-by-email"> = async ({ path, query }, ctx) => {
  const target = /^[0-9]+$/.test(path.email)
    ? await accessUserForRead(ctx.db, ctx.user, ctx.realm, Number(path.email), {
        allowBots: true,
        allowDeactivated: true,
      })
    : await accessUserByEmail(
        ctx.db,
        ctx.realm,
        ctx.user,
        path.email,
        await fakeEmailDomain(ctx.db, ctx.realm, ctx.config),
      );
  // access_user_by_email ends in access_user_common, as by id (checked above).
  if (!/^[0-9]+$/.test(path.email)) await checkAccessible(ctx.db, ctx.user, ctx.realm, target);
  // The values come with the user's row, in one statement.
  const profileData = query.include_custom_profile_fields
    ? profileDataOf(await realmUsers(ctx.db, ctx.realm.id, { ids: [target.id], profileData: true }))
    : undefined;
  return {
    user: toApiUser(target, ctx.user, {
      clientGravatar: query.client_gravatar ?? true,
      profileData,
    }),
  };
};

type UpdateBody = Parameters<Handler<"update-user">>[0]["body"];
const userUpdate = (body: UpdateBody) => ({
  fullName: body?.full_name,
  role: body?.role,
  profileData: body?.profile_data,
  newEmail: body?.new_email,
});

/** PATCH /users/{user_id} (update_user_backend). */
export const updateUser: Handler<"update-user"> = async ({ path, body }, ctx) => {
  await doUpdateUser(ctx, path.user_id, userUpdate(body));
  return {};
};

/**
 * PATCH /users/{email} (update_user_by_email_api, feature level 313): the address looked up as
 * GET /users/{email} does; a numeric segment is a user ID (the paths share their template).
 */
export const updateUserByEmail: Handler<"update-user-by-email"> = async ({ path, body }, ctx) => {
  const id = /^[0-9]+$/.test(path.email)
    ? Number(path.email)
    : (
        await accessUserByEmail(
          ctx.db,
          ctx.realm,
          ctx.user,
          path.email,
          await fakeEmailDomain(ctx.db, ctx.realm, ctx.config),
        )
      ).id;
  await doUpdateUser(ctx, id, userUpdate(body));
  return {};
};

/** POST /users (create_user_backend). */
export const createUser: Handler<"create-user"> = async ({ body }, ctx) => ({
  user_id: await doCreateUserByAdmin(ctx, {
    email: body.email,
    password: body.password,
    fullName: body.full_name,
  }),
});
