/** Rows: channels, subscriptions and their properties, channel folders, topics' visibility. */
import * as make from "./make.ts";
import { bad, by, ok, ADMIN_ONLY, NOT_GUEST, type Fixtures, type Row } from "./matrix.ts";

const INVALID_CHANNEL = bad("Invalid channel ID");
const NO_SUCH_USER = bad("No such user");
/** check_if_user_can_manage_default_streams (administrators). */
const DEFAULT_CHANNELS = bad("You do not have permission to change default channels.");
/** can_administer_channel_group (administrators); a guest cannot even see this channel. */
const ADMINISTER = bad("You do not have permission to administer this channel.");
/** The name of the channel the unsubscribe row made last (named in the other organization's refusal). */
let unsubscribed = "";
const everyone = "owner admin mod member guest bot";

/** A new channel of iago's and the actor's, for the actor to leave; its name is kept for the refusal. */
async function channelToLeave(fx: Fixtures, actor: string) {
  const id = await make.channel(fx, ["iago", actor]);
  const { name } = await fx.server.db.stream.findUniqueOrThrow({
    where: { id },
    select: { name: true },
  });
  unsubscribed = name;
  return name;
}

export const rows: Row[] = [
  {
    op: "POST /channels/create",
    req: ({ fx, actor }) => ({
      body: { name: `created ${fx.next()}`, subscribers: [fx.uid(actor)] },
    }),
    expect: by({ "owner admin mod member bot": ok, guest: NOT_GUEST, other: NO_SUCH_USER }),
  },
  {
    op: "GET /streams",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    op: "GET /streams/{stream_id}",
    req: ({ fx }) => ({ path: { stream_id: fx.sid("Verona") } }),
    expect: by({ [everyone]: ok, other: INVALID_CHANNEL }),
  },
  {
    op: "DELETE /streams/{stream_id}",
    req: async ({ fx }) => ({ path: { stream_id: await make.channel(fx) } }),
    expect: by({
      "owner admin": ok,
      "mod member bot": ADMINISTER,
      "guest other": INVALID_CHANNEL,
    }),
  },
  {
    op: "PATCH /streams/{stream_id}",
    req: async ({ fx }) => ({
      path: { stream_id: await make.channel(fx) },
      body: { description: "changed" },
    }),
    expect: by({
      "owner admin": ok,
      "mod member bot": ADMINISTER,
      "guest other": INVALID_CHANNEL,
    }),
  },
  {
    op: "GET /streams/{stream_id}/members",
    req: ({ fx }) => ({ path: { stream_id: fx.sid("Verona") } }),
    expect: by({ [everyone]: ok, other: INVALID_CHANNEL }),
  },
  {
    op: "GET /streams/{stream_id}/email_address",
    req: ({ fx }) => ({ path: { stream_id: fx.sid("Verona") } }),
    expect: by({ [everyone]: ok, other: INVALID_CHANNEL }),
  },
  {
    op: "GET /get_stream_id",
    req: () => ({ query: { stream: "Verona" } }),
    expect: by({ [everyone]: ok, other: bad("Invalid channel name 'Verona'") }),
  },
  {
    op: "GET /users/me/subscriptions",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    // Venice is public; hamlet, desdemona, shiva and the bot are not subscribed, the guest
    // cannot subscribe himself, and the other organization has no Venice to join (it may create
    // one).
    op: "POST /users/me/subscriptions",
    req: () => ({ body: { subscriptions: [{ name: "Venice" }] } }),
    expect: by({
      "owner admin mod member bot other": ok,
      guest: bad("Not allowed for guest users"),
    }),
  },
  {
    op: "DELETE /users/me/subscriptions",
    req: async ({ fx, actor }) => {
      const name = await channelToLeave(fx, actor);
      return { body: { subscriptions: [name] } };
    },
    expect: () => by({ [everyone]: ok, other: bad(`Channel(s) (${unsubscribed}) do not exist`) }),
  },
  {
    // Joins Venice and leaves a channel made for the actor; the guest is refused even though he
    // only could leave (Zulip runs the subscribe view first), and the other organization has no
    // such channel to leave.
    op: "PATCH /users/me/subscriptions",
    req: async ({ fx, actor }) => {
      const name = await channelToLeave(fx, actor);
      return { body: { add: [{ name: "Venice" }], delete: [name] } };
    },
    expect: () =>
      by({
        "owner admin mod member bot": ok,
        guest: bad("Not allowed for guest users"),
        other: bad(`Channel(s) (${unsubscribed}) do not exist`),
      }),
  },
  {
    op: "POST /channel_folders/create",
    req: ({ fx }) => ({ body: { name: `folder ${fx.next()}`, description: "" } }),
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    op: "POST /default_streams",
    req: async ({ fx }) => ({ body: { stream_id: await make.channel(fx) } }),
    expect: by({
      "owner admin": ok,
      "mod member guest bot": DEFAULT_CHANNELS,
      other: INVALID_CHANNEL,
    }),
  },
  {
    op: "DELETE /default_streams",
    req: ({ fx }) => ({ body: { stream_id: fx.sid("Verona") } }),
    expect: by({
      "owner admin": ok,
      "mod member guest bot": DEFAULT_CHANNELS,
      other: INVALID_CHANNEL,
    }),
  },
  {
    op: "GET /channel_folders",
    req: () => ({}),
    expect: by({ [`${everyone} other`]: ok }),
  },
  {
    // Every folder of the caller's organization, reversed (the other organization has its own).
    op: "PATCH /channel_folders",
    req: async ({ fx, caller }) => {
      const realmId =
        caller === "other"
          ? (await fx.server.db.userProfile.findUniqueOrThrow({ where: { id: fx.otherOrg.id } }))
              .realmId
          : fx.realmId;
      const folders = await fx.server.db.channelFolder.findMany({
        where: { realmId },
        select: { id: true },
      });
      return { body: { order: folders.map((f) => f.id).reverse() } };
    },
    expect: by({ "owner admin other": ok, "mod member guest bot": ADMIN_ONLY }),
  },
  {
    op: "PATCH /channel_folders/{channel_folder_id}",
    req: async ({ fx }) => ({
      path: { channel_folder_id: await make.channelFolder(fx) },
      body: { description: "changed" },
    }),
    expect: by({
      "owner admin": ok,
      "mod member guest bot": ADMIN_ONLY,
      other: bad("Invalid channel folder ID"),
    }),
  },
  {
    op: "POST /user_topics",
    req: ({ fx }) => ({
      body: { stream_id: fx.sid("Verona"), topic: "matrix", visibility_policy: 1 },
    }),
    expect: by({ [everyone]: ok, other: INVALID_CHANNEL }),
  },
  {
    op: "PATCH /users/me/subscriptions/muted_topics",
    req: ({ fx }) => ({
      body: { stream_id: fx.sid("Verona"), topic: `muted ${fx.next()}`, op: "add" },
    }),
    expect: by({ [everyone]: ok, other: INVALID_CHANNEL }),
  },
  {
    op: "POST /users/me/subscriptions/properties",
    req: ({ fx }) => ({
      body: {
        subscription_data: [{ stream_id: fx.sid("Denmark"), property: "pin_to_top", value: true }],
      },
    }),
    expect: (fx) =>
      by({
        "owner admin mod member guest": ok,
        bot: bad(`Not subscribed to channel ID ${fx.sid("Denmark")}`),
        other: INVALID_CHANNEL,
      }),
  },
  {
    op: "PATCH /users/me/subscriptions/{stream_id}",
    req: ({ fx }) => ({
      path: { stream_id: fx.sid("Denmark") },
      body: { property: "pin_to_top", value: true },
    }),
    expect: (fx) =>
      by({
        "owner admin mod member guest": ok,
        bot: bad(`Not subscribed to channel ID ${fx.sid("Denmark")}`),
        other: INVALID_CHANNEL,
      }),
  },
  {
    op: "GET /users/{user_id}/subscriptions/{stream_id}",
    req: ({ fx }) => ({ path: { user_id: fx.uid("hamlet"), stream_id: fx.sid("Verona") } }),
    expect: by({ [everyone]: ok, other: NO_SUCH_USER }),
  },
  {
    op: "GET /users/{user_id}/channels",
    req: ({ fx }) => ({ path: { user_id: fx.uid("hamlet") } }),
    expect: by({ [everyone]: ok, other: NO_SUCH_USER }),
  },
];
