/**
 * Fresh objects for rows whose call consumes state (a deletion, a deactivation, a unique name),
 * made through the API as the user who would own them.
 */
import { doCreateUserWithDefaultChannels } from "../../../server/actions/users/users.ts";
import { Role } from "../../../server/lib/users/users.ts";
import { createChannel, sendToChannel } from "../../helpers/builders.ts";
import { expectSuccess } from "../../helpers/expect.ts";
import { PNG, multipart, type Fixtures } from "./matrix.ts";

/** A channel message (Verona, where everyone but the bots is subscribed). */
export async function message(fx: Fixtures, sender = "hamlet", topic = "matrix") {
  const sent = await sendToChannel(fx.as(sender), { to: "Verona", topic, content: "matrix" });
  return sent.id;
}

/** A public channel created by iago, with these subscribers (iago among them). */
export async function channel(fx: Fixtures, subscribers: string[] = ["iago", "hamlet"]) {
  const created = await createChannel(fx.as("iago"), {
    name: `matrix ${fx.next()}`,
    subscribers: subscribers.map(fx.uid),
  });
  return created.id;
}

/** A new member of the first organization (active unless told otherwise). */
export async function user(fx: Fixtures, active = true) {
  const realm = await fx.server.db.realm.findUniqueOrThrow({ where: { id: fx.realmId } });
  const n = fx.next();
  const created = await doCreateUserWithDefaultChannels(fx.server.deps, realm, {
    email: `matrix${n}@zulip.com`,
    fullName: `Matrix ${n}`,
    role: Role.MEMBER,
    passwordHash: null,
  });
  if (!active)
    await fx.server.db.userProfile.update({ where: { id: created.id }, data: { isActive: false } });
  return created.id;
}

/** A user group created by `creator` (who may then manage it), with hamlet as its member. */
export async function group(fx: Fixtures, creator = "hamlet") {
  const created = await expectSuccess(
    fx.as(creator).POST("/user_groups/create", {
      body: { name: `matrix ${fx.next()}`, description: "", members: [fx.uid("hamlet")] },
    }),
  );
  return created.group_id;
}

export async function draft(fx: Fixtures, owner: string) {
  const created = await expectSuccess(
    fx.as(owner).POST("/drafts", {
      body: { drafts: [{ type: "", to: [], topic: "", content: "matrix draft" }] },
    }),
  );
  return created.ids[0]!;
}

export async function savedSnippet(fx: Fixtures, owner: string) {
  const created = await expectSuccess(
    fx.as(owner).POST("/saved_snippets", { body: { title: "matrix", content: "snippet" } }),
  );
  return created.saved_snippet_id;
}

/** A custom navigation view of `owner`; its fragment. */
export async function navigationView(fx: Fixtures, owner: string) {
  const fragment = `narrow/channel/${fx.next()}-matrix`;
  await expectSuccess(
    fx.as(owner).POST("/navigation_views", {
      body: { fragment, is_pinned: true, name: `matrix ${fragment}` },
    }),
  );
  return fragment;
}

export const scheduledBody = (fx: Fixtures) => ({
  type: "stream" as const,
  to: fx.sid("Verona"),
  topic: "matrix",
  content: "later",
  scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 3600,
});

export async function scheduled(fx: Fixtures, owner: string) {
  const created = await expectSuccess(
    fx.as(owner).POST("/scheduled_messages", { body: scheduledBody(fx) }),
  );
  return created.scheduled_message_id;
}

/** A reminder of `owner` about a new Verona message. */
export async function reminder(fx: Fixtures, owner: string) {
  const messageId = await message(fx);
  const created = await expectSuccess(
    fx.as(owner).POST("/reminders", {
      body: {
        message_id: messageId,
        scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 3600,
      },
    }),
  );
  return created.reminder_id;
}

/** An email invitation sent by iago. */
export async function invite(fx: Fixtures) {
  const email = `invited${fx.next()}@example.com`;
  await expectSuccess(
    fx.as("iago").POST("/invites", { body: { invitee_emails: email, stream_ids: [] } }),
  );
  const { invites } = await expectSuccess(fx.as("iago").GET("/invites"));
  return invites.find((i) => i.email === email)!.id;
}

/** A reusable invitation link made by iago. */
export async function inviteLink(fx: Fixtures) {
  const { invite_link } = await expectSuccess(fx.as("iago").POST("/invites/multiuse", {}));
  const key = /\/join\/([a-z2-7]+)\/$/.exec(invite_link)![1]!;
  const confirmation = await fx.server.db.confirmation.findUniqueOrThrow({
    where: { confirmationKey: key },
  });
  return confirmation.objectId;
}

export async function profileField(fx: Fixtures) {
  const created = await expectSuccess(
    fx.as("iago").POST("/realm/profile_fields", {
      body: { field_type: 1, name: `Matrix ${fx.next()}`, hint: "" },
    }),
  );
  return created.id;
}

export async function linkifier(fx: Fixtures) {
  const created = await expectSuccess(
    fx.as("iago").POST("/realm/filters", {
      body: {
        pattern: `MX${fx.next()}-(?P<id>[0-9]+)`,
        url_template: "https://example.com/{id}",
      },
    }),
  );
  return created.id;
}

/**
 * A made data export, requested a month ago: outside the week that POST /export/realm's limit
 * counts (its own row spends that), and made without a file, which deleting does not need.
 */
export async function realmExport(fx: Fixtures) {
  const month = new Date(Date.now() - 30 * 86_400_000);
  const row = await fx.server.db.realmExport.create({
    data: {
      realmId: fx.realmId,
      type: 1,
      status: 3,
      actingUserId: fx.server.creds.users.iago!.user_id,
      dateRequested: month,
      dateSucceeded: month,
      exportPath: `exports/${fx.realmId}/matrix${fx.next()}/zulip-export-matrix.tar.gz`,
    },
  });
  return row.id;
}

export async function playground(fx: Fixtures) {
  const created = await expectSuccess(
    fx.as("iago").POST("/realm/playgrounds", {
      body: {
        name: `Matrix ${fx.next()}`,
        pygments_language: "Python",
        url_template: "https://python.example.com?code={code}",
      },
    }),
  );
  return created.id;
}

/** A custom emoji uploaded by `author`; its name. */
export async function emoji(fx: Fixtures, author = "hamlet") {
  const name = `matrix_${fx.next()}`;
  await expectSuccess(
    fx.as(author).POST("/realm/emoji/{emoji_name}", {
      params: { path: { emoji_name: name } },
      ...multipart({ file: new Blob([PNG], { type: "image/png" }) }),
    }),
  );
  return name;
}

/** A bot owned by `owner`. */
export async function bot(fx: Fixtures, owner = "hamlet") {
  const n = fx.next();
  const created = await expectSuccess(
    fx.as(owner).POST("/bots", { body: { full_name: `Matrix bot ${n}`, short_name: `mx${n}` } }),
  );
  return created.user_id;
}

/** A file uploaded by `owner` and linked from a message in Verona; its `/user_uploads/…` path. */
export async function upload(fx: Fixtures, owner = "hamlet") {
  const { url } = await expectSuccess(
    fx.as(owner).POST("/user_uploads", multipart({ file: new Blob([PNG], { type: "image/png" }) })),
  );
  await sendToChannel(fx.as(owner), { to: "Verona", topic: "files", content: `[file](${url})` });
  return url;
}

export async function channelFolder(fx: Fixtures) {
  const created = await expectSuccess(
    fx.as("iago").POST("/channel_folders/create", {
      body: { name: `Matrix ${fx.next()}`, description: "" },
    }),
  );
  return created.channel_folder_id;
}

export async function queue(fx: Fixtures, owner: string) {
  const { queue_id } = await expectSuccess(
    fx.as(owner).POST("/register", { body: { event_types: ["message"] } }),
  );
  return queue_id!;
}

/** A file uploaded by `owner`, linked from no message; its attachment ID. */
export async function attachment(fx: Fixtures, owner: string) {
  const { url } = await expectSuccess(
    fx.as(owner).POST("/user_uploads", multipart({ file: new Blob([PNG], { type: "image/png" }) })),
  );
  const pathId = url.slice("/user_uploads/".length);
  return (await fx.server.db.attachment.findUniqueOrThrow({ where: { pathId } })).id;
}
