/**
 * Rows: users and bots, their settings, status, presence, alert words, mutes, custom profile
 * fields, API keys, saved snippets and navigation views.
 */
import * as make from "./make.ts";
import {
  bad,
  by,
  err,
  ok,
  ADMIN_ONLY,
  DEACTIVATED,
  INSUFFICIENT,
  NO_BOTS,
  NOT_GUEST,
  PNG,
  type Call,
  type Row,
} from "./matrix.ts";

const NO_SUCH_USER = bad("No such user");
const everyone = "owner admin mod member guest bot";

/**
 * Every account and key as setup left them, after a caller deactivated itself (which deactivates
 * the bots it owns) or took a new key.
 */
async function restore({ fx }: Call) {
  const { users, bots } = fx.server.creds;
  for (const cred of [...Object.values(users), ...Object.values(bots)])
    await fx.server.db.userProfile.update({
      where: { id: cred.user_id },
      data: { isActive: cred !== users[DEACTIVATED], apiKey: cred.api_key },
    });
  await fx.server.db.userProfile.update({
    where: { id: fx.otherOrg.id },
    data: { isActive: true, apiKey: fx.otherOrg.apiKey },
  });
}

/** The custom profile field the row's setup made last (named in the other organization's refusal). */
let lastField = 0;

export const rows: Row[] = [
  {
    op: "GET /users",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    // Administrators with Zulip's can_create_users flag (set for desdemona and iago).
    op: "POST /users",
    req: ({ fx }) => {
      const n = fx.next();
      return {
        body: {
          email: `new${n}@zulip.com`,
          password: "a-long-enough-password",
          full_name: `New ${n}`,
        },
      };
    },
    expect: by({
      "owner admin": ok,
      "mod member guest bot": ADMIN_ONLY,
      other: bad("User not authorized to create users"),
    }),
  },
  {
    op: "GET /users/me",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "DELETE /users/me",
    req: () => ({}),
    after: restore,
    expect: by({
      "admin mod member guest bot": ok,
      owner: bad("Cannot deactivate the only organization owner."),
      other: bad("Cannot deactivate the only user."),
    }),
  },
  {
    op: "GET /users/{email}",
    req: () => ({ path: { email: "hamlet@zulip.com" } }),
    expect: by({ [everyone]: ok, other: NO_SUCH_USER }),
  },
  {
    op: "DELETE /users/{user_id}",
    req: async ({ fx }) => ({ path: { user_id: await make.user(fx) } }),
    expect: by({ "owner admin": ok, "mod member guest bot": INSUFFICIENT, other: NO_SUCH_USER }),
  },
  {
    op: "PATCH /users/{user_id}",
    req: async ({ fx }) => ({
      path: { user_id: await make.user(fx) },
      body: { full_name: `Renamed ${fx.next()}` },
    }),
    expect: by({ "owner admin": ok, "mod member guest bot": INSUFFICIENT, other: NO_SUCH_USER }),
  },
  {
    // The other organization's user finds no one by this address.
    op: "PATCH /users/{email}",
    req: async ({ fx }) => {
      const id = await make.user(fx);
      const { email } = await fx.server.db.userProfile.findUniqueOrThrow({ where: { id } });
      return { path: { email }, body: { full_name: `Renamed ${fx.next()}` } };
    },
    expect: by({ "owner admin": ok, "mod member guest bot": INSUFFICIENT, other: NO_SUCH_USER }),
  },
  {
    op: "POST /users/{user_id}/reactivate",
    req: async ({ fx }) => ({ path: { user_id: await make.user(fx, false) } }),
    expect: by({ "owner admin": ok, "mod member guest bot": INSUFFICIENT, other: NO_SUCH_USER }),
  },
  {
    op: "POST /users/me/status",
    req: () => ({ body: { status_text: "in the matrix" } }),
    expect: by({ "owner admin mod member guest other": ok, bot: NO_BOTS }),
  },
  {
    op: "GET /users/{user_id}/status",
    req: ({ fx }) => ({ path: { user_id: fx.uid("hamlet") } }),
    expect: by({ [everyone]: ok, other: NO_SUCH_USER }),
  },
  {
    op: "POST /users/{user_id}/status",
    req: ({ fx }) => ({ path: { user_id: fx.uid("othello") }, body: { status_text: "set" } }),
    expect: by({ "owner admin": ok, "mod member guest bot": INSUFFICIENT, other: NO_SUCH_USER }),
  },
  {
    op: "POST /users/me/api_key/regenerate",
    req: () => ({}),
    after: restore,
    expect: by({ "owner admin mod member guest other": ok, bot: NO_BOTS }),
  },
  {
    // Zulip's set_avatar_backend: any user, bots too (avatar_changes_disabled is off here).
    op: "POST /users/me/avatar",
    req: () => ({ body: { file: new Blob([PNG], { type: "image/png" }) }, multipart: true }),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "DELETE /users/me/avatar",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "PATCH /settings",
    req: () => ({ body: { enter_sends: true } }),
    expect: by({ "owner admin mod member guest other": ok, bot: NO_BOTS }),
  },
  {
    op: "GET /attachments",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    // Each caller deletes a file of its own; the other organization's user finds none of ours.
    op: "DELETE /attachments/{attachment_id}",
    req: async ({ fx, actor }) => ({ path: { attachment_id: await make.attachment(fx, actor) } }),
    expect: by({ [everyone]: ok, other: bad("Invalid attachment") }),
  },
  {
    op: "PATCH /settings/notifications",
    req: () => ({ body: { enable_sounds: true } }),
    expect: by({ "owner admin mod member guest other": ok, bot: NO_BOTS }),
  },
  {
    op: "PATCH /settings/display",
    req: () => ({ body: { enter_sends: true } }),
    expect: by({ "owner admin mod member guest other": ok, bot: NO_BOTS }),
  },
  {
    op: "PUT /bot_storage",
    req: ({ fx }) => ({ body: { storage: { [`key ${fx.next()}`]: "value" } } }),
    expect: by({ bot: ok, "owner admin mod member guest other": bad("Must be a bot user") }),
  },
  {
    op: "GET /bot_storage",
    req: () => ({}),
    expect: by({ bot: ok, "owner admin mod member guest other": bad("Must be a bot user") }),
  },
  {
    op: "DELETE /bot_storage",
    req: () => ({}),
    expect: by({ bot: ok, "owner admin mod member guest other": bad("Must be a bot user") }),
  },
  {
    op: "GET /bots",
    req: () => ({}),
    expect: by({ "owner admin mod member bot other": ok, guest: NOT_GUEST }),
  },
  {
    op: "POST /bots",
    req: ({ fx }) => {
      const n = fx.next();
      return { body: { full_name: `Made bot ${n}`, short_name: `made${n}` } };
    },
    expect: by({ "owner admin mod member bot other": ok, guest: NOT_GUEST }),
  },
  {
    // A bot of hamlet's: its owner and administrators may change it.
    op: "DELETE /bots/{bot_id}",
    req: async ({ fx }) => ({ path: { bot_id: await make.bot(fx) } }),
    expect: by({
      "owner admin member": ok,
      "mod guest bot": INSUFFICIENT,
      other: bad("No such bot"),
    }),
  },
  {
    op: "PATCH /bots/{bot_id}",
    req: async ({ fx }) => ({
      path: { bot_id: await make.bot(fx) },
      body: { full_name: `Renamed bot ${fx.next()}` },
    }),
    expect: by({
      "owner admin member": ok,
      "mod bot": INSUFFICIENT,
      guest: NOT_GUEST,
      other: bad("No such bot"),
    }),
  },
  {
    // access_bot_by_id: the bot's owner (hamlet) and administrators only.
    op: "GET /bots/{bot_id}/api_key",
    req: async ({ fx }) => ({ path: { bot_id: await make.bot(fx) } }),
    expect: by({
      "owner admin member": ok,
      "mod guest bot": INSUFFICIENT,
      other: bad("No such bot"),
    }),
  },
  {
    op: "POST /users/me/presence",
    req: () => ({ body: { status: "active" } }),
    expect: by({ "owner admin mod member guest other": ok, bot: NO_BOTS }),
  },
  {
    op: "GET /users/{user_id_or_email}/presence",
    req: ({ fx }) => ({ path: { user_id_or_email: String(fx.uid("hamlet")) } }),
    expect: by({ [everyone]: ok, other: NO_SUCH_USER }),
  },
  {
    op: "GET /realm/presence",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "GET /users/me/alert_words",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "POST /users/me/alert_words",
    req: () => ({ body: { alert_words: ["matrix"] } }),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "DELETE /users/me/alert_words",
    req: () => ({ body: { alert_words: ["matrix"] } }),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "POST /users/me/muted_users/{muted_user_id}",
    req: async ({ fx }) => ({ path: { muted_user_id: await make.user(fx) } }),
    expect: by({ [everyone]: ok, other: NO_SUCH_USER }),
  },
  {
    op: "DELETE /users/me/muted_users/{muted_user_id}",
    req: async ({ fx, actor }) => {
      const id = await make.user(fx);
      const { response } = await fx
        .as(actor)
        .POST("/users/me/muted_users/{muted_user_id}", { params: { path: { muted_user_id: id } } });
      if (response.status !== 200) throw new Error(`${actor} could not mute`);
      return { path: { muted_user_id: id } };
    },
    expect: by({ [everyone]: ok, other: NO_SUCH_USER }),
  },
  {
    op: "GET /realm/profile_fields",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "POST /realm/profile_fields",
    req: ({ fx }) => ({ body: { field_type: 1, name: `Field ${fx.next()}`, hint: "" } }),
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    op: "PATCH /realm/profile_fields",
    req: async ({ fx }) => {
      lastField = await make.profileField(fx);
      const { custom_fields } = (await fx.as("iago").GET("/realm/profile_fields")).data!;
      return { body: { order: custom_fields.map((f) => f.id) } };
    },
    expect: by({
      "owner admin": ok,
      "mod member guest bot": ADMIN_ONLY,
      other: bad("Invalid order mapping."),
    }),
  },
  {
    op: "DELETE /realm/profile_fields/{field_id}",
    req: async ({ fx }) => ({ path: { field_id: (lastField = await make.profileField(fx)) } }),
    expect: () =>
      by({
        "owner admin": ok,
        "mod member guest bot": ADMIN_ONLY,
        other: bad(`Field id ${lastField} not found.`),
      }),
  },
  {
    op: "PATCH /realm/profile_fields/{field_id}",
    req: async ({ fx }) => ({
      path: { field_id: (lastField = await make.profileField(fx)) },
      body: { name: `Renamed field ${fx.next()}` },
    }),
    expect: () =>
      by({
        "owner admin": ok,
        "mod member guest bot": ADMIN_ONLY,
        other: bad(`Field id ${lastField} not found.`),
      }),
  },
  {
    op: "PATCH /users/me/profile_data",
    // update_user_custom_profile_data is human_users_only.
    req: async ({ fx }) => ({
      body: { data: [{ id: (lastField = await make.profileField(fx)), value: "x" }] },
    }),
    expect: () =>
      by({
        "owner admin mod member guest": ok,
        bot: NO_BOTS,
        other: bad(`Field id ${lastField} not found.`),
      }),
  },
  {
    op: "DELETE /users/me/profile_data",
    req: async ({ fx }) => ({ body: { data: [(lastField = await make.profileField(fx))] } }),
    expect: () =>
      by({
        "owner admin mod member guest": ok,
        bot: NO_BOTS,
        other: bad(`Field id ${lastField} not found.`),
      }),
  },
  {
    op: "GET /saved_snippets",
    req: () => ({}),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "POST /saved_snippets",
    req: () => ({ body: { title: "matrix", content: "snippet" } }),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "PATCH /saved_snippets/{saved_snippet_id}",
    req: async ({ fx, actor }) => ({
      path: { saved_snippet_id: await make.savedSnippet(fx, actor) },
      body: { title: "renamed" },
    }),
    expect: by({
      "owner admin mod member guest bot": ok,
      other: err(404, "Saved snippet does not exist."),
    }),
  },
  {
    op: "DELETE /saved_snippets/{saved_snippet_id}",
    req: async ({ fx, actor }) => ({
      path: { saved_snippet_id: await make.savedSnippet(fx, actor) },
    }),
    expect: by({
      "owner admin mod member guest bot": ok,
      other: err(404, "Saved snippet does not exist."),
    }),
  },
  {
    op: "GET /navigation_views",
    req: () => ({}),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "POST /navigation_views",
    req: ({ fx }) => ({
      body: { fragment: `narrow/is/matrix${fx.next()}`, is_pinned: false, name: `v${fx.next()}` },
    }),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "PATCH /navigation_views/{fragment}",
    req: async ({ fx, actor }) => ({
      path: { fragment: await make.navigationView(fx, actor) },
      body: { is_pinned: false },
    }),
    expect: by({
      "owner admin mod member guest bot": ok,
      other: err(404, "Navigation view does not exist."),
    }),
  },
  {
    op: "DELETE /navigation_views/{fragment}",
    req: async ({ fx, actor }) => ({ path: { fragment: await make.navigationView(fx, actor) } }),
    expect: by({
      "owner admin mod member guest bot": ok,
      other: err(404, "Navigation view does not exist."),
    }),
  },
];
