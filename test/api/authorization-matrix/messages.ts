/** Rows: messages, their flags, reactions, edits, reports, topics, typing, drafts, scheduling. */
import { sendToChannel } from "../../helpers/builders.ts";
import * as make from "./make.ts";
import { bad, by, err, ok, ADMIN_ONLY, type Row } from "./matrix.ts";

const INVALID_MESSAGE = bad("Invalid message(s)");
const INVALID_CHANNEL = bad("Invalid channel ID");
const msg = (id: number) => ({ path: { message_id: id } });

export const rows: Row[] = [
  {
    op: "GET /messages",
    req: () => ({ query: { anchor: "newest", num_before: 1, num_after: 0 } }),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "POST /messages",
    req: ({ fx }) => ({
      body: { type: "stream", to: fx.sid("Verona"), topic: "matrix", content: "hello" },
    }),
    expect: (fx) =>
      by({
        "owner admin mod member guest bot": ok,
        other: bad(`Channel with ID '${fx.sid("Verona")}' does not exist`),
      }),
  },
  {
    op: "GET /messages/matches_narrow",
    req: async ({ fx }) => ({ query: { msg_ids: [await make.message(fx)], narrow: [] } }),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "GET /messages/{message_id}",
    req: async ({ fx }) => msg(await make.message(fx)),
    expect: by({ "owner admin mod member guest bot": ok, other: INVALID_MESSAGE }),
  },
  {
    // hamlet's message: can_delete_any_message_group is administrators; a sender may delete
    // their own within the limit.
    op: "DELETE /messages/{message_id}",
    req: async ({ fx }) => msg(await make.message(fx)),
    expect: by({
      "owner admin member": ok,
      "mod guest bot": bad("You don't have permission to delete this message"),
      other: INVALID_MESSAGE,
    }),
  },
  {
    // Content edits are the sender's alone.
    op: "PATCH /messages/{message_id}",
    req: async ({ fx }) => ({ ...msg(await make.message(fx)), body: { content: "edited" } }),
    expect: by({
      member: ok,
      "owner admin mod guest bot": bad("You don't have permission to edit this message"),
      other: INVALID_MESSAGE,
    }),
  },
  {
    // hamlet's message: only its sender (the member) may type an edit of it.
    op: "POST /messages/{message_id}/typing",
    req: async ({ fx }) => ({ ...msg(await make.message(fx)), body: { op: "start" } }),
    expect: by({
      member: ok,
      "owner admin mod guest bot": bad("You don't have permission to edit this message"),
      other: INVALID_MESSAGE,
    }),
  },
  {
    op: "GET /messages/{message_id}/history",
    req: async ({ fx }) => msg(await make.message(fx)),
    expect: by({ "owner admin mod member guest bot": ok, other: INVALID_MESSAGE }),
  },
  {
    // othello's message (a sender cannot report their own).
    op: "POST /messages/{message_id}/report",
    req: async ({ fx }) => ({
      ...msg(await make.message(fx, "othello")),
      body: { report_type: "spam" },
    }),
    // The other organization has no moderation channel, which Zulip checks first.
    expect: by({
      "owner admin mod member guest bot": ok,
      other: bad("Message reporting is not enabled in this organization."),
    }),
  },
  {
    op: "POST /messages/flags",
    req: async ({ fx }) => ({
      body: { messages: [await make.message(fx)], op: "add", flag: "starred" },
    }),
    expect: by({ "owner admin mod member guest bot": ok, other: INVALID_MESSAGE }),
  },
  {
    op: "POST /messages/flags/narrow",
    req: () => ({
      body: { anchor: "newest", num_before: 1, num_after: 0, narrow: [], op: "add", flag: "read" },
    }),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "POST /mark_all_as_read",
    req: () => ({}),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "POST /mark_stream_as_read",
    req: ({ fx }) => ({ body: { stream_id: fx.sid("Verona") } }),
    expect: by({ "owner admin mod member guest bot": ok, other: INVALID_CHANNEL }),
  },
  {
    op: "POST /mark_topic_as_read",
    req: ({ fx }) => ({ body: { stream_id: fx.sid("Verona"), topic_name: "matrix" } }),
    expect: by({ "owner admin mod member guest bot": ok, other: INVALID_CHANNEL }),
  },
  {
    op: "GET /messages/{message_id}/read_receipts",
    req: async ({ fx }) => msg(await make.message(fx)),
    expect: by({ "owner admin mod member guest bot": ok, other: INVALID_MESSAGE }),
  },
  {
    op: "POST /messages/render",
    req: () => ({ body: { content: "**matrix**" } }),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "POST /messages/{message_id}/reactions",
    req: async ({ fx }) => ({ ...msg(await make.message(fx)), body: { emoji_name: "smile" } }),
    expect: by({ "owner admin mod member guest bot": ok, other: INVALID_MESSAGE }),
  },
  {
    // The caller's own reaction (hamlet's for the callers that cannot react here).
    op: "DELETE /messages/{message_id}/reactions",
    req: async ({ fx, actor }) => {
      const id = await make.message(fx);
      const { response } = await fx.as(actor).POST("/messages/{message_id}/reactions", {
        params: msg(id),
        body: { emoji_name: "smile" },
      });
      if (response.status !== 200) throw new Error(`${actor} could not react`);
      return { ...msg(id), body: { emoji_name: "smile" } };
    },
    expect: by({ "owner admin mod member guest bot": ok, other: INVALID_MESSAGE }),
  },
  {
    // A vote on hamlet's poll: anyone who may read the message.
    op: "POST /submessage",
    req: async ({ fx }) => {
      const poll = await sendToChannel(fx.as("hamlet"), {
        to: "Verona",
        topic: "matrix",
        content: "/poll matrix?\nyes",
      });
      const content = '{"type":"vote","key":"canned,0","vote":1}';
      return { body: { message_id: poll.id, msg_type: "widget", content } };
    },
    expect: by({ "owner admin mod member guest bot": ok, other: INVALID_MESSAGE }),
  },
  {
    op: "POST /typing",
    req: ({ fx }) => ({ body: { op: "start", to: [fx.uid("othello")] } }),
    expect: (fx) =>
      by({
        "owner admin mod member guest bot": ok,
        other: bad(`Invalid user ID ${fx.uid("othello")}`),
      }),
  },
  {
    op: "GET /users/me/{stream_id}/topics",
    req: ({ fx }) => ({ path: { stream_id: fx.sid("Verona") } }),
    expect: by({ "owner admin mod member guest bot": ok, other: INVALID_CHANNEL }),
  },
  {
    // require_realm_admin; a fresh topic each time.
    op: "POST /streams/{stream_id}/delete_topic",
    req: async ({ fx }) => {
      const topic = `doomed ${fx.next()}`;
      await make.message(fx, "hamlet", topic);
      return { path: { stream_id: fx.sid("Verona") }, body: { topic_name: topic } };
    },
    expect: by({
      "owner admin": ok,
      "mod member guest bot": ADMIN_ONLY,
      other: INVALID_CHANNEL,
    }),
  },
  {
    op: "GET /scheduled_messages",
    req: () => ({}),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "POST /scheduled_messages",
    req: ({ fx }) => ({ body: make.scheduledBody(fx) }),
    expect: (fx) =>
      by({
        "owner admin mod member guest bot": ok,
        other: bad(`Channel with ID '${fx.sid("Verona")}' does not exist`),
      }),
  },
  {
    op: "GET /reminders",
    req: () => ({}),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "POST /reminders",
    req: async ({ fx }) => ({
      body: {
        message_id: await make.message(fx),
        scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 3600,
      },
    }),
    expect: by({
      "owner admin mod member guest bot": ok,
      other: INVALID_MESSAGE,
    }),
  },
  {
    op: "DELETE /reminders/{reminder_id}",
    req: async ({ fx, actor }) => ({
      path: { reminder_id: await make.reminder(fx, actor) },
    }),
    expect: by({
      "owner admin mod member guest bot": ok,
      other: err(404, "Reminder does not exist"),
    }),
  },
  {
    op: "DELETE /scheduled_messages/{scheduled_message_id}",
    req: async ({ fx, actor }) => ({
      path: { scheduled_message_id: await make.scheduled(fx, actor) },
    }),
    expect: by({
      "owner admin mod member guest bot": ok,
      other: err(404, "Scheduled message does not exist"),
    }),
  },
  {
    op: "PATCH /scheduled_messages/{scheduled_message_id}",
    req: async ({ fx, actor }) => ({
      path: { scheduled_message_id: await make.scheduled(fx, actor) },
      body: { content: "sooner" },
    }),
    expect: by({
      "owner admin mod member guest bot": ok,
      other: err(404, "Scheduled message does not exist"),
    }),
  },
  {
    op: "GET /drafts",
    req: () => ({}),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "POST /drafts",
    req: () => ({ body: { drafts: [{ type: "", to: [], topic: "", content: "draft" }] } }),
    expect: by({ "owner admin mod member guest bot other": ok }),
  },
  {
    op: "DELETE /drafts/{draft_id}",
    req: async ({ fx, actor }) => ({ path: { draft_id: await make.draft(fx, actor) } }),
    expect: by({
      "owner admin mod member guest bot": ok,
      other: err(404, "Draft does not exist"),
    }),
  },
  {
    op: "PATCH /drafts/{draft_id}",
    req: async ({ fx, actor }) => ({
      path: { draft_id: await make.draft(fx, actor) },
      body: { draft: { type: "", to: [], topic: "", content: "redrafted" } },
    }),
    expect: by({
      "owner admin mod member guest bot": ok,
      other: err(404, "Draft does not exist"),
    }),
  },
];
