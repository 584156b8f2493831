/**
 * Rows: the organization's settings, user groups, invitations, linkifiers, custom emoji,
 * uploads, events, push devices, video calls, and the operations needing no credentials.
 */
import * as make from "./make.ts";
import {
  bad,
  by,
  err,
  ok,
  ADMIN_ONLY,
  INSUFFICIENT,
  NO_BOTS,
  NOT_GUEST,
  PNG,
  type Row,
} from "./matrix.ts";

const everyone = "owner admin mod member guest bot";
const NO_TOKEN = bad("Token does not exist");
const INVALID_GROUP = bad("Invalid user group");
const NO_INVITATION = bad("No such invitation");
const BAD_QUEUE = (id: string) => bad(`Bad event queue ID: ${id}`);

export const rows: Row[] = [
  {
    op: "GET /server_settings",
    req: () => ({}),
    expect: by({ [`${everyone} other deactivated foreignHost anonymous`]: ok }),
  },
  {
    // The credentials are the body's (iago's); the other organization has no iago.
    op: "POST /fetch_api_key",
    req: ({ fx }) => ({
      body: {
        username: fx.server.creds.users.iago!.email,
        password: fx.server.creds.users.iago!.password!,
      },
    }),
    expect: by({
      [`${everyone} deactivated foreignHost anonymous`]: ok,
      other: err(401, "Your username or password is incorrect"),
    }),
  },
  {
    // Development login is off on the matrix's server (DEV_LOGIN's default).
    op: "POST /dev_fetch_api_key",
    req: ({ fx }) => ({ body: { username: fx.server.creds.users.iago!.email } }),
    expect: by({
      [`${everyone} other deactivated foreignHost anonymous`]: bad("DevAuthBackend not enabled."),
    }),
  },
  {
    op: "POST /register",
    req: () => ({ body: { event_types: ["message"] } }),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "GET /events",
    req: async ({ fx, actor, caller }) => {
      const queue_id = await make.queue(fx, actor);
      queues.set(caller, queue_id);
      return { query: { queue_id, dont_block: true } };
    },
    expect: () => by({ [everyone]: ok, other: BAD_QUEUE(queues.get("other")!) }),
  },
  {
    op: "DELETE /events",
    req: async ({ fx, actor, caller }) => {
      const queue_id = await make.queue(fx, actor);
      queues.set(caller, queue_id);
      return { body: { queue_id } };
    },
    expect: () => by({ [everyone]: ok, other: BAD_QUEUE(queues.get("other")!) }),
  },
  {
    op: "PATCH /realm",
    req: () => ({ body: { description: "The matrix." } }),
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    op: "POST /realm/test_welcome_bot_custom_message",
    req: () => ({ body: { welcome_message_custom_text: "Welcome, matrix." } }),
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    op: "GET /user_groups",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "POST /user_groups/create",
    req: ({ fx }) => ({ body: { name: `group ${fx.next()}`, description: "", members: [] } }),
    expect: by({ "owner admin mod member bot other": ok, guest: NOT_GUEST }),
  },
  {
    // hamlet's group: its creator and administrators may manage it.
    op: "PATCH /user_groups/{user_group_id}",
    req: async ({ fx }) => ({
      path: { user_group_id: await make.group(fx) },
      body: { description: "changed" },
    }),
    expect: by({
      "owner admin member": ok,
      "mod bot": INSUFFICIENT,
      guest: NOT_GUEST,
      other: INVALID_GROUP,
    }),
  },
  {
    op: "POST /user_groups/{user_group_id}/deactivate",
    req: async ({ fx }) => ({ path: { user_group_id: await make.group(fx) } }),
    expect: by({
      "owner admin member": ok,
      "mod bot": INSUFFICIENT,
      guest: NOT_GUEST,
      other: INVALID_GROUP,
    }),
  },
  {
    op: "GET /user_groups/{user_group_id}/members",
    req: async ({ fx }) => ({ path: { user_group_id: await make.group(fx) } }),
    expect: by({ [everyone]: ok, other: INVALID_GROUP }),
  },
  {
    op: "POST /user_groups/{user_group_id}/members",
    req: async ({ fx }) => ({
      path: { user_group_id: await make.group(fx) },
      body: { add: [fx.uid("othello")] },
    }),
    expect: by({
      "owner admin member": ok,
      "mod bot": INSUFFICIENT,
      guest: NOT_GUEST,
      other: INVALID_GROUP,
    }),
  },
  {
    op: "GET /user_groups/{user_group_id}/members/{user_id}",
    req: async ({ fx }) => ({
      path: { user_group_id: await make.group(fx), user_id: fx.uid("hamlet") },
    }),
    expect: by({ [everyone]: ok, other: bad("No such user") }),
  },
  {
    op: "GET /user_groups/{user_group_id}/subgroups",
    req: async ({ fx }) => ({ path: { user_group_id: await make.group(fx) } }),
    expect: by({ [everyone]: ok, other: INVALID_GROUP }),
  },
  {
    op: "POST /user_groups/{user_group_id}/subgroups",
    req: async ({ fx }) => ({
      path: { user_group_id: await make.group(fx) },
      body: { add: [await make.group(fx)] },
    }),
    expect: by({
      "owner admin member": ok,
      "mod bot": INSUFFICIENT,
      guest: NOT_GUEST,
      other: INVALID_GROUP,
    }),
  },
  {
    op: "GET /invites",
    req: () => ({}),
    expect: by({ "owner admin mod member bot other": ok, guest: NOT_GUEST }),
  },
  {
    op: "POST /invites",
    req: ({ fx }) => ({
      body: { invitee_emails: `matrix${fx.next()}@example.com`, stream_ids: [] },
    }),
    expect: by({ "owner admin mod member bot other": ok, guest: NOT_GUEST }),
  },
  {
    op: "POST /invites/multiuse",
    req: () => ({}),
    expect: by({ "owner admin other": ok, "mod member bot": INSUFFICIENT, guest: NOT_GUEST }),
  },
  {
    // iago's invitation: its inviter and administrators may revoke or resend it.
    op: "DELETE /invites/{invite_id}",
    req: async ({ fx }) => ({ path: { invite_id: await make.invite(fx) } }),
    expect: by({
      "owner admin": ok,
      "mod member bot": ADMIN_ONLY,
      guest: NOT_GUEST,
      other: NO_INVITATION,
    }),
  },
  {
    op: "POST /invites/{invite_id}/resend",
    req: async ({ fx }) => ({ path: { invite_id: await make.invite(fx) } }),
    expect: by({
      "owner admin": ok,
      "mod member bot": ADMIN_ONLY,
      guest: NOT_GUEST,
      other: NO_INVITATION,
    }),
  },
  {
    op: "DELETE /invites/multiuse/{invite_id}",
    req: async ({ fx }) => ({ path: { invite_id: await make.inviteLink(fx) } }),
    expect: by({
      "owner admin": ok,
      "mod member bot": ADMIN_ONLY,
      guest: NOT_GUEST,
      other: NO_INVITATION,
    }),
  },
  {
    op: "GET /realm/linkifiers",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "PATCH /realm/linkifiers",
    req: async ({ fx }) => {
      await make.linkifier(fx);
      const { linkifiers } = (await fx.as("iago").GET("/realm/linkifiers")).data!;
      return { body: { ordered_linkifier_ids: linkifiers.map((l) => l.id).reverse() } };
    },
    expect: by({
      "owner admin": ok,
      "mod member guest bot": ADMIN_ONLY,
      other: bad("The ordered list must enumerate all existing linkifiers exactly once"),
    }),
  },
  {
    op: "POST /realm/filters",
    req: ({ fx }) => ({
      body: { pattern: `MA${fx.next()}-(?P<id>[0-9]+)`, url_template: "https://example.com/{id}" },
    }),
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    op: "DELETE /realm/filters/{filter_id}",
    req: async ({ fx }) => ({ path: { filter_id: await make.linkifier(fx) } }),
    expect: by({
      "owner admin": ok,
      "mod member guest bot": ADMIN_ONLY,
      other: bad("Linkifier not found."),
    }),
  },
  {
    op: "PATCH /realm/filters/{filter_id}",
    req: async ({ fx }) => ({
      path: { filter_id: await make.linkifier(fx) },
      body: { pattern: `MB${fx.next()}-(?P<id>[0-9]+)`, url_template: "https://example.com/{id}" },
    }),
    expect: by({
      "owner admin": ok,
      "mod member guest bot": ADMIN_ONLY,
      other: bad("Linkifier not found."),
    }),
  },
  {
    op: "POST /realm/playgrounds",
    req: ({ fx }) => ({
      body: {
        name: `Matrix ${fx.next()}`,
        pygments_language: "Python",
        url_template: "https://python.example.com?code={code}",
      },
    }),
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    op: "DELETE /realm/playgrounds/{playground_id}",
    req: async ({ fx }) => ({ path: { playground_id: await make.playground(fx) } }),
    expect: by({
      "owner admin": ok,
      "mod member guest bot": ADMIN_ONLY,
      other: bad("Invalid playground"),
    }),
  },
  {
    // The value is Zulip's default: the row changes nothing other tests would notice.
    op: "PATCH /realm/user_settings_defaults",
    req: () => ({ body: { starred_message_counts: true } }),
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    op: "GET /realm/emoji",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "POST /realm/emoji/{emoji_name}",
    req: ({ fx }) => ({
      path: { emoji_name: `made_${fx.next()}` },
      body: { file: new Blob([PNG], { type: "image/png" }) },
      multipart: true,
    }),
    expect: by({ "owner admin mod member bot other": ok, guest: NOT_GUEST }),
  },
  {
    // hamlet's emoji: its author and administrators may remove it.
    op: "DELETE /realm/emoji/{emoji_name}",
    req: async ({ fx }) => ({ path: { emoji_name: (lastEmoji = await make.emoji(fx)) } }),
    expect: () =>
      by({
        "owner admin member": ok,
        "mod guest bot": bad("Must be an organization administrator or emoji author"),
        other: err(404, `Emoji '${lastEmoji}' does not exist`),
      }),
  },
  {
    op: "POST /user_uploads",
    req: () => ({ body: { file: new Blob([PNG], { type: "image/png" }) }, multipart: true }),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    // hamlet's upload, linked from a message in Verona.
    op: "GET /user_uploads/{realm_id_str}/{filename}",
    req: async ({ fx }) => {
      const [, , realm_id_str, ...rest] = (await make.upload(fx)).split("/");
      return { path: { realm_id_str, filename: rest.join("/") } };
    },
    expect: by({ [everyone]: ok, other: err(403, "You are not authorized to view this file.") }),
  },
  {
    op: "POST /register_client_device",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    // The caller's own device; another organization's user names this organization's.
    op: "POST /remove_client_device",
    req: async ({ fx, actor }) => {
      const own = actor === "other" ? "hamlet" : actor;
      const { data } = await fx.as(own).POST("/register_client_device", {});
      return { body: { device_id: data?.device_id ?? 1 } };
    },
    expect: by({ [everyone]: ok, other: bad("Invalid `device_id`") }),
  },
  {
    op: "POST /mobile_push/register",
    req: async ({ fx, actor }) => {
      const { data } = await fx.as(actor).POST("/register_client_device", {});
      return {
        body: { device_id: data?.device_id ?? 1, push_key: "a".repeat(44), push_key_id: 1 },
      };
    },
    expect: by({
      "owner admin mod member guest other": bad(
        "Server is not configured to use push notification service.",
      ),
      bot: NO_BOTS,
    }),
  },
  {
    // No device of the caller's is registered for push (the bouncer is not configured).
    op: "POST /mobile_push/e2ee/test_notification",
    req: () => ({}),
    expect: by({
      "owner admin mod member guest other": bad("No active registered push device"),
      bot: NO_BOTS,
    }),
  },
  {
    // Legacy push tokens: the caller's own (none configured: stored, nothing sent); another
    // organization's user names hamlet's.
    op: "POST /users/me/apns_device_token",
    req: ({ fx }) => ({
      body: { token: `c0ffee${String(fx.next()).padStart(8, "0")}`, appid: "org.zulip.Zulip" },
    }),
    expect: by({ "owner admin mod member guest other": ok, bot: NO_BOTS }),
  },
  {
    op: "DELETE /users/me/apns_device_token",
    req: async ({ fx, actor }) => {
      const token = `beef${String(fx.next()).padStart(8, "0")}`;
      await fx.as(actor === "other" ? "hamlet" : actor).POST("/users/me/apns_device_token", {
        body: { token, appid: "org.zulip.Zulip" },
      });
      return { body: { token } };
    },
    expect: by({ "owner admin mod member guest": ok, bot: NO_BOTS, other: NO_TOKEN }),
  },
  {
    op: "POST /users/me/android_gcm_reg_id",
    req: ({ fx }) => ({ body: { token: `fcm-${fx.next()}` } }),
    expect: by({ "owner admin mod member guest other": ok, bot: NO_BOTS }),
  },
  {
    op: "DELETE /users/me/android_gcm_reg_id",
    req: async ({ fx, actor }) => {
      const token = `fcm-${fx.next()}`;
      await fx.as(actor === "other" ? "hamlet" : actor).POST("/users/me/android_gcm_reg_id", {
        body: { token },
      });
      return { body: { token } };
    },
    expect: by({ "owner admin mod member guest": ok, bot: NO_BOTS, other: NO_TOKEN }),
  },
  {
    op: "POST /mobile_push/test_notification",
    req: () => ({}),
    expect: by({ "owner admin mod member guest other": ok, bot: NO_BOTS }),
  },
  {
    op: "POST /calls/videoprovider/create",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    // This server's OAuth provider is Zoom here: Zulip's answer when Webex has no credentials.
    op: "POST /calls/webex/create",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: bad("Webex credentials have not been configured") }),
  },
  {
    op: "GET /export/realm",
    req: () => ({}),
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    op: "POST /export/realm",
    req: () => ({ body: { export_type: 1 } }),
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    op: "DELETE /export/realm/{export_id}",
    req: async ({ fx }) => ({ path: { export_id: await make.realmExport(fx) } }),
    expect: by({
      "owner admin": ok,
      "mod member guest bot": ADMIN_ONLY,
      other: bad("Invalid data export ID"),
    }),
  },
  {
    op: "GET /export/realm/consents",
    req: () => ({}),
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    // The matrix's server has no BigBlueButton.
    op: "GET /calls/bigbluebutton/create",
    req: () => ({ query: { meeting_name: "matrix meeting" } }),
    expect: by({ [`${everyone} other`]: bad("BigBlueButton is not configured.") }),
  },
];

/** The custom emoji the removal row made last (named in the other organization's refusal). */
let lastEmoji = "";

/** The queue each caller's events row registered, for the other organization's refusal text. */
const queues = new Map<string, string>();
