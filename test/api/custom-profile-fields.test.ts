/**
 * Custom profile fields: POST, GET and PATCH /realm/profile_fields, PATCH and DELETE
 * /realm/profile_fields/{field_id}, PATCH and DELETE /users/me/profile_data, their events, the
 * register state and profile_data on users (zerver/tests/test_custom_profile_data.py).
 */
import { describe, expect, it } from "vitest";
import { doCreateRealm } from "../../server/actions/realm/realm.ts";
import type { RequestInfo } from "../../server/context.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();

/**
 * The spec declares field_data a bare `type: object`, which the generated types read as an empty
 * record: the one place its contents go untyped.
 */
type FieldBody<B> = Omit<B, "field_data"> & { field_data?: Record<string, unknown> };
const create = (as: string, body: FieldBody<Body<"/realm/profile_fields", "post">>) =>
  server
    .as(as)
    .POST("/realm/profile_fields", { body: { ...body, field_data: untyped(body.field_data) } });
const update = (
  as: string,
  fieldId: number,
  body: FieldBody<Body<"/realm/profile_fields/{field_id}", "patch">>,
) =>
  server.as(as).PATCH("/realm/profile_fields/{field_id}", {
    params: { path: { field_id: fieldId } },
    body: { ...body, field_data: untyped(body.field_data) },
  });
const remove = (as: string, fieldId: number) =>
  server.as(as).DELETE("/realm/profile_fields/{field_id}", {
    params: { path: { field_id: fieldId } },
  });
const setData = (as: string, data: Body<"/users/me/profile_data", "patch">["data"]) =>
  server.as(as).PATCH("/users/me/profile_data", { body: { data } });
const clearData = (as: string, data: number[]) =>
  server.as(as).DELETE("/users/me/profile_data", { body: { data } });
const fields = async (as = "hamlet") =>
  (await expectSuccess(server.as(as).GET("/realm/profile_fields"))).custom_fields;
const field = async (id: number) => (await fields()).find((f) => f.id === id)!;
const created = async (body: FieldBody<Body<"/realm/profile_fields", "post">>) =>
  (await expectSuccess(create("iago", body))).id;
const profileData = async (user: string) =>
  ((await expectSuccess(server.as(user).GET("/users/me"))) as any).profile_data as Record<
    string,
    { value: string; rendered_value?: string }
  >;
const userId = (name: string) => server.creds.users[name]!.user_id;

async function openQueue(as: string, eventTypes: string[]) {
  return (
    await expectSuccess(server.as(as).POST("/register", { body: { event_types: eventTypes } }))
  ).queue_id!;
}
async function eventsOf(as: string, queueId: string) {
  return (
    await expectSuccess(
      server.as(as).GET("/events", {
        params: { query: { queue_id: queueId, last_event_id: -1, dont_block: true } },
      }),
    )
  ).events as any[];
}

describe("POST /realm/profile_fields", () => {
  it("is for administrators", async () => {
    await expectError(
      create("hamlet", { name: "Shoe size", field_type: 1 }),
      400,
      "Must be an organization administrator",
      { code: "UNAUTHORIZED_PRINCIPAL" },
    );
  });

  it("creates every type; order is the id; everyone gets the whole list", async () => {
    const queue = await openQueue("polonius", ["custom_profile_fields"]);
    const ids: number[] = [];
    for (const [type, name] of [
      [1, "Phone number"],
      [2, "Biography"],
      [4, "Birthday"],
      [5, "Favorite website"],
      [6, "Mentor"],
      [8, "Pronouns"],
    ] as const)
      ids.push(await created({ name, field_type: type, hint: `Your ${name.toLowerCase()}` }));
    ids.push(
      await created({
        name: "Favorite editor",
        field_type: 3,
        field_data: { "0": { text: "Vim", order: "1" }, "1": { text: "Emacs", order: "2" } },
      }),
    );
    ids.push(
      await created({
        name: "Fediverse",
        field_type: 7,
        field_data: { subtype: "custom", url_pattern: "https://mastodon.example/@%(username)s" },
      }),
    );
    const list = await fields("polonius");
    for (const id of ids) expect(list.find((f) => f.id === id)!.order).toBe(id);
    expect(list.find((f) => f.id === ids[0])).toEqual({
      id: ids[0],
      name: "Phone number",
      type: 1,
      hint: "Your phone number",
      field_data: "",
      order: ids[0],
      required: false,
      editable_by_user: true,
    });
    expect(JSON.parse(list.find((f) => f.name === "Favorite editor")!.field_data)).toEqual({
      "0": { text: "Vim", order: "1" },
      "1": { text: "Emacs", order: "2" },
    });
    expect(list.find((f) => f.name === "Fediverse")!.type).toBe(7);
    const events = (await eventsOf("polonius", queue)).filter(
      (e) => e.type === "custom_profile_fields",
    );
    expect(events).toHaveLength(ids.length);
    expect(events.at(-1).fields.map((f: any) => f.id)).toEqual(list.map((f) => f.id));
  });

  it("checks the label, the hint and the type in Zulip's order", async () => {
    await expectError(create("iago", { name: "", field_type: 1 }), 400, "Label cannot be blank.");
    await expectError(
      create("iago", { name: "   ", field_type: 100 }),
      400,
      "Label cannot be blank.",
    );
    await expectError(
      create("iago", { name: "x".repeat(41), field_type: 1 }),
      400,
      "name is too long (limit: 40 characters)",
    );
    await expectError(
      create("iago", { name: "Shoe size", hint: "h".repeat(81), field_type: 1 }),
      400,
      "hint is too long (limit: 80 characters)",
    );
    await expectError(
      create("iago", { name: "Shoe size", field_type: 100 }),
      400,
      "Invalid field type.",
    );
    await expectError(
      create("iago", { name: "Shoe size", field_type: untyped("text id") }),
      400,
      "field_type is not valid JSON",
    );
    await expectError(
      create("iago", { name: "Phone number", field_type: 1 }),
      400,
      "A field with that label already exists.",
    );
    // The label is stripped before its length is checked.
    const id = await created({ name: ` ${"y".repeat(40)} `, field_type: 1 });
    expect((await field(id)).name).toBe("y".repeat(40));
    expect((await expectSuccess(remove("iago", id))).result).toBe("success");
  });

  it("checks dropdown choices", async () => {
    await expectError(
      create("iago", { name: "Team", field_type: 3, field_data: {} }),
      400,
      "Field must have at least one choice.",
    );
    await expectError(
      create("iago", { name: "Team", field_type: 3 }),
      400,
      "Field must have at least one choice.",
    );
    await expectError(
      create("iago", {
        name: "Team",
        field_type: 3,
        field_data: { a: { text: "Red", order: "1" }, b: { text: "Red", order: "2" } },
      }),
      400,
      "Field must not have duplicate choices.",
    );
    await expectError(
      create("iago", { name: "Team", field_type: 3, field_data: { a: { text: "Red" } } }),
      400,
      "order key is missing from field_data",
    );
    await expectError(
      create("iago", {
        name: "Team",
        field_type: 3,
        field_data: { " ": { text: "Red", order: "1" } },
      }),
      400,
      "'value' cannot be blank.",
    );
    await expectError(
      create("iago", { name: "Team", field_type: 3, field_data: { a: { text: " ", order: "1" } } }),
      400,
      'field_data["text"] cannot be blank.',
    );
  });

  it("keeps the choices in the order they were given, as Zulip's text column does", async () => {
    const id = await created({
      name: "Editor order",
      field_type: 3,
      field_data: { emacs: { text: "Emacs", order: "1" }, vim: { text: "Vim", order: "2" } },
    });
    // A jsonb column would answer {"vim":…,"emacs":…} (it sorts keys, shortest first).
    expect(Object.keys(JSON.parse((await field(id)).field_data) as object)).toEqual([
      "emacs",
      "vim",
    ]);
    expect((await expectSuccess(remove("iago", id))).result).toBe("success");
  });

  it("checks external accounts; github and twitter are named by the server", async () => {
    await expectError(
      create("iago", { name: "Account", field_type: 7, field_data: {} }),
      400,
      "subtype key is missing from field_data",
    );
    await expectError(
      create("iago", { name: "Account", field_type: 7, field_data: { subtype: "myspace" } }),
      400,
      "Invalid external account type",
    );
    await expectError(
      create("iago", { name: "Account", field_type: 7, field_data: { subtype: "custom" } }),
      400,
      "Custom external account must define URL pattern",
    );
    await expectError(
      create("iago", {
        name: "Account",
        field_type: 7,
        field_data: { subtype: "custom", url_pattern: "https://example.com/user" },
      }),
      400,
      "URL pattern must contain '%(username)s'.",
    );
    await expectError(
      create("iago", {
        name: "Account",
        field_type: 7,
        field_data: { subtype: "custom", url_pattern: "not a url %(username)s" },
      }),
      400,
      'field_data["url_pattern"] is not a URL',
    );
    const github = await created({
      name: "ignored",
      hint: "ignored too",
      field_type: 7,
      field_data: { subtype: "github" },
    });
    expect(await field(github)).toMatchObject({
      name: "GitHub username",
      hint: "",
      field_data: '{"subtype":"github"}',
    });
    await expectError(
      create("iago", untyped({ field_type: 7, field_data: { subtype: "github" } })),
      400,
      "A field with that label already exists.",
    );
  });

  it("shows at most 2 fields in the profile summary, never a Users field", async () => {
    await expectError(
      create("iago", { name: "Buddy", field_type: 6, display_in_profile_summary: true }),
      400,
      "Field type not supported for display in profile summary.",
    );
    const first = await created({ name: "Motto", field_type: 2, display_in_profile_summary: true });
    const second = await created({
      name: "Nickname",
      field_type: 1,
      display_in_profile_summary: true,
    });
    expect((await field(first)).display_in_profile_summary).toBe(true);
    expect(await field((await fields()).find((f) => f.name === "Birthday")!.id)).not.toHaveProperty(
      "display_in_profile_summary",
    );
    await expectError(
      create("iago", { name: "Shirt", field_type: 1, display_in_profile_summary: true }),
      400,
      "Only 2 custom profile fields can be displayed in the profile summary.",
    );
    await expectError(
      update("iago", (await fields()).find((f) => f.name === "Birthday")!.id, {
        display_in_profile_summary: true,
      }),
      400,
      "Only 2 custom profile fields can be displayed in the profile summary.",
    );
    // A field already shown may be updated with the flag again.
    await expectSuccess(
      update("iago", second, { display_in_profile_summary: true, hint: "Short" }),
    );
    await expectSuccess(update("iago", first, { display_in_profile_summary: false }));
    await expectSuccess(update("iago", second, { display_in_profile_summary: false }));
  });

  it("use_for_user_matching: short text and external account only, in records only when true", async () => {
    await expectError(
      create("iago", { name: "Anniversary", field_type: 4, use_for_user_matching: true }),
      400,
      "Field type not supported for user matching.",
    );
    const matching = await created({
      name: "Employee ID",
      field_type: 1,
      use_for_user_matching: true,
    });
    const plain = await created({ name: "Desk", field_type: 1, use_for_user_matching: false });
    expect((await field(matching)).use_for_user_matching).toBe(true);
    expect(await field(plain)).not.toHaveProperty("use_for_user_matching");
    const flags = await created({
      name: "Badge",
      field_type: 1,
      required: true,
      editable_by_user: false,
    });
    expect(await field(flags)).toMatchObject({ required: true, editable_by_user: false });
  });

  it("takes a form body: JSON text for field_data and booleans, + for spaces", async () => {
    const iago = server.creds.users.iago!;
    const body = new URLSearchParams({
      name: "Office floor",
      field_type: "3",
      field_data: JSON.stringify({ g: { text: "Ground floor", order: "1" } }),
      required: "true",
    }).toString();
    expect(body).toContain("name=Office+floor");
    const response = await fetch(`${server.baseUrl}/api/v1/realm/profile_fields`, {
      method: "POST",
      headers: {
        Authorization: "Basic " + Buffer.from(`${iago.email}:${iago.api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body,
    });
    expect(response.status).toBe(200);
    const { id } = (await response.json()) as { id: number };
    expect(await field(id)).toMatchObject({
      name: "Office floor",
      required: true,
      field_data: '{"g":{"text":"Ground floor","order":"1"}}',
    });
  });
});

describe("PATCH and DELETE /realm/profile_fields/{field_id}", () => {
  it("renames and re-hints, with the rules of creation", async () => {
    const id = await created({ name: "Hobby", field_type: 1 });
    const queue = await openQueue("othello", ["custom_profile_fields"]);
    await expectError(
      update("hamlet", id, { name: "Pastime" }),
      400,
      "Must be an organization administrator",
      {
        code: "UNAUTHORIZED_PRINCIPAL",
      },
    );
    await expectError(update("iago", 1234, { name: "Pastime" }), 400, "Field id 1234 not found.");
    await expectError(update("iago", id, { name: " " }), 400, "Label cannot be blank.");
    await expectError(
      update("iago", id, { name: "Phone number" }),
      400,
      "A field with that label already exists.",
    );
    await expectError(
      update("iago", id, { hint: "h".repeat(81) }),
      400,
      "hint is too long (limit: 80 characters)",
    );
    await expectSuccess(
      update("iago", id, { name: " Pastime ", hint: "What you do for fun", required: true }),
    );
    expect(await field(id)).toMatchObject({
      name: "Pastime",
      hint: "What you do for fun",
      required: true,
      type: 1,
    });
    const events = (await eventsOf("othello", queue)).filter(
      (e) => e.type === "custom_profile_fields",
    );
    expect(events).toHaveLength(1);
    expect(events[0].fields.find((f: any) => f.id === id)).toMatchObject({ name: "Pastime" });
  });

  it("a github field keeps its name and hint; only its flags change", async () => {
    const github = (await fields()).find((f) => f.name === "GitHub username")!;
    await expectError(
      update("iago", github.id, { name: "GitHub" }),
      400,
      "Default custom field cannot be updated.",
    );
    await expectError(
      update("iago", github.id, { field_data: { subtype: "twitter" } }),
      400,
      "Default custom field cannot be updated.",
    );
    await expectSuccess(
      update("iago", github.id, {
        name: "GitHub username",
        required: true,
        use_for_user_matching: true,
      }),
    );
    expect(await field(github.id)).toMatchObject({ required: true, use_for_user_matching: true });
  });

  it("dropping a dropdown choice clears the values that chose it", async () => {
    const id = await created({
      name: "Shift",
      field_type: 3,
      field_data: { d: { text: "Day", order: "1" }, n: { text: "Night", order: "2" } },
    });
    await expectSuccess(setData("hamlet", [{ id, value: "n" }]));
    await expectSuccess(setData("othello", [{ id, value: "d" }]));
    await expectError(
      update("iago", id, { field_data: {} }),
      400,
      "Field must have at least one choice.",
    );
    await expectSuccess(update("iago", id, { field_data: { d: { text: "Day", order: "1" } } }));
    expect((await profileData("hamlet"))[String(id)]).toBeUndefined();
    expect((await profileData("othello"))[String(id)]).toEqual({ value: "d" });
  });

  it("deletes a field with its values", async () => {
    const id = await created({ name: "Locker", field_type: 1 });
    await expectSuccess(setData("hamlet", [{ id, value: "12" }]));
    const queue = await openQueue("hamlet", ["custom_profile_fields"]);
    await expectError(remove("hamlet", id), 400, "Must be an organization administrator", {
      code: "UNAUTHORIZED_PRINCIPAL",
    });
    await expectError(remove("iago", 1234), 400, "Field id 1234 not found.");
    await expectSuccess(remove("iago", id));
    expect((await fields()).some((f) => f.id === id)).toBe(false);
    expect((await profileData("hamlet"))[String(id)]).toBeUndefined();
    expect(await server.db.customProfileFieldValue.count({ where: { fieldId: id } })).toBe(0);
    const [event] = (await eventsOf("hamlet", queue)).filter(
      (e) => e.type === "custom_profile_fields",
    );
    expect(event.fields.some((f: any) => f.id === id)).toBe(false);
  });

  it("a field of another organization is not found", async () => {
    const realm = await server.db.$transaction((tx) =>
      doCreateRealm(tx, { name: "Elsewhere", stringId: "elsewhere" }),
    );
    const other = await server.db.customProfileField.create({
      data: { realmId: realm.id, name: "Theirs", fieldType: 1 },
    });
    await expectError(
      update("iago", other.id, { name: "Ours" }),
      400,
      `Field id ${other.id} not found.`,
    );
    await expectError(remove("iago", other.id), 400, `Field id ${other.id} not found.`);
    await expectError(
      setData("hamlet", [{ id: other.id, value: "x" }]),
      400,
      `Field id ${other.id} not found.`,
    );
  });
});

describe("PATCH /realm/profile_fields (reorder)", () => {
  it("needs every field; positions become the order", async () => {
    const ids = (await fields()).map((f) => f.id);
    await expectError(
      server.as("hamlet").PATCH("/realm/profile_fields", { body: { order: ids.reverse() } }),
      400,
      "Must be an organization administrator",
      { code: "UNAUTHORIZED_PRINCIPAL" },
    );
    await expectError(
      server.as("iago").PATCH("/realm/profile_fields", { body: { order: ids.slice(1) } }),
      400,
      "Invalid order mapping.",
    );
    const queue = await openQueue("cordelia", ["custom_profile_fields"]);
    await expectSuccess(
      server.as("iago").PATCH("/realm/profile_fields", { body: { order: [...ids, 99999] } }),
    );
    const list = await fields();
    expect(list.map((f) => f.id)).toEqual(ids);
    expect(list.map((f) => f.order)).toEqual(ids.map((_, i) => i));
    const [event] = (await eventsOf("cordelia", queue)).filter(
      (e) => e.type === "custom_profile_fields",
    );
    expect(event.fields.map((f: any) => f.id)).toEqual(ids);
  });
});

describe("PATCH /users/me/profile_data", () => {
  const byName = async (name: string) => (await fields()).find((f) => f.name === name)!.id;

  it("sets every type; text is rendered as Markdown; GET /users/me shows the values", async () => {
    const [phone, bio, editor, birthday, website, mentor, fediverse, pronouns] = await Promise.all([
      byName("Phone number"),
      byName("Biography"),
      byName("Favorite editor"),
      byName("Birthday"),
      byName("Favorite website"),
      byName("Mentor"),
      byName("Fediverse"),
      byName("Pronouns"),
    ]);
    const queue = await openQueue("othello", ["realm_user"]);
    await expectSuccess(
      setData("hamlet", [
        { id: phone, value: "+0-11-23-5813" },
        { id: bio, value: "To be or **not** to be" },
        { id: editor, value: "0" },
        { id: birthday, value: "1909-03-05" },
        { id: website, value: "https://zulip.com" },
        { id: mentor, value: [userId("cordelia")] },
        { id: fediverse, value: "hamlet" },
        { id: pronouns, value: "he/him" },
      ]),
    );
    const data = await profileData("hamlet");
    expect(data[String(phone)]).toEqual({
      value: "+0-11-23-5813",
      rendered_value: "<p>+0-11-23-5813</p>",
    });
    expect(data[String(bio)]).toEqual({
      value: "To be or **not** to be",
      rendered_value: "<p>To be or <strong>not</strong> to be</p>",
    });
    expect(data[String(editor)]).toEqual({ value: "0" });
    expect(data[String(birthday)]).toEqual({ value: "1909-03-05" });
    expect(data[String(mentor)]).toEqual({ value: `[${userId("cordelia")}]` });
    const updates = (await eventsOf("othello", queue)).filter(
      (e) => e.type === "realm_user" && e.op === "update",
    );
    expect(updates).toHaveLength(8);
    expect(updates.find((e) => e.person.custom_profile_field.id === bio)).toMatchObject({
      person: {
        user_id: userId("hamlet"),
        custom_profile_field: {
          id: bio,
          value: "To be or **not** to be",
          rendered_value: "<p>To be or <strong>not</strong> to be</p>",
        },
      },
    });
    expect(
      updates.find((e) => e.person.custom_profile_field.id === birthday).person
        .custom_profile_field,
    ).toEqual({
      id: birthday,
      value: "1909-03-05",
    });
    // The same values again change nothing and send nothing.
    const again = await openQueue("othello", ["realm_user"]);
    await expectSuccess(setData("hamlet", [{ id: phone, value: "+0-11-23-5813" }]));
    expect(await eventsOf("othello", again)).toEqual([]);
  });

  it("refuses values that do not suit the field, naming it", async () => {
    const [phone, birthday, website, mentor, editor] = await Promise.all([
      byName("Phone number"),
      byName("Birthday"),
      byName("Favorite website"),
      byName("Mentor"),
      byName("Favorite editor"),
    ]);
    await expectError(
      setData("hamlet", [{ id: 1234, value: "x" }]),
      400,
      "Field id 1234 not found.",
    );
    await expectError(
      setData("hamlet", [{ id: phone, value: "1".repeat(51) }]),
      400,
      "Phone number is too long (limit: 50 characters)",
    );
    await expectError(
      setData("hamlet", [{ id: birthday, value: "a-b-c" }]),
      400,
      "Birthday is not a date",
    );
    await expectError(
      setData("hamlet", [{ id: birthday, value: "1909-3-5" }]),
      400,
      "Birthday is not a date",
    );
    await expectError(
      setData("hamlet", [{ id: birthday, value: "1909-02-30" }]),
      400,
      "Birthday is not a date",
    );
    await expectError(
      setData("hamlet", [{ id: birthday, value: [123] }]),
      400,
      "Birthday is not a string",
    );
    await expectError(
      setData("hamlet", [{ id: website, value: "not URL" }]),
      400,
      "Favorite website is not a URL",
    );
    await expectError(
      setData("hamlet", [{ id: mentor, value: [1000] }]),
      400,
      "Invalid user IDs: 1000",
    );
    await expectError(
      setData("hamlet", [{ id: mentor, value: "x" }]),
      400,
      "User IDs is not a list",
    );
    const bot = server.creds.bots["default-bot"]!.user_id;
    await expectError(
      setData("hamlet", [{ id: mentor, value: [bot] }]),
      400,
      `User with ID ${bot} is a bot`,
    );
    await expectError(
      setData("hamlet", [{ id: editor, value: "foobar" }]),
      400,
      "'foobar' is not a valid choice for 'Favorite editor'.",
    );
    // Checks come before any write: the valid first item is not applied.
    await expectError(
      setData("hamlet", [
        { id: phone, value: "555" },
        { id: birthday, value: "never" },
      ]),
      400,
      "Birthday is not a date",
    );
    expect((await profileData("hamlet"))[String(phone)]!.value).toBe("+0-11-23-5813");
  });

  it("refuses deactivated users in a Users field", async () => {
    const mentor = await byName("Mentor");
    const aaron = userId("aaron");
    await server.db.userProfile.update({ where: { id: aaron }, data: { isActive: false } });
    try {
      await expectError(
        setData("othello", [{ id: mentor, value: [aaron] }]),
        400,
        `User with ID ${aaron} is deactivated`,
      );
    } finally {
      await server.db.userProfile.update({ where: { id: aaron }, data: { isActive: true } });
    }
  });

  it("fields users may not edit are for administrators", async () => {
    const badge = await byName("Badge");
    await expectError(
      setData("hamlet", [{ id: badge, value: "007" }]),
      400,
      "You are not allowed to change this field. Contact an administrator to update it.",
    );
    await expectError(
      clearData("hamlet", [badge]),
      400,
      "You are not allowed to change this field. Contact an administrator to update it.",
    );
    await expectSuccess(setData("iago", [{ id: badge, value: "001" }]));
    expect((await profileData("iago"))[String(badge)]!.value).toBe("001");
  });

  it("bots are refused", async () => {
    await expectError(
      setData("default-bot", [{ id: await byName("Phone number"), value: "1" }]),
      400,
      "This endpoint does not accept bot requests.",
    );
    await expectError(
      clearData("default-bot", [await byName("Phone number")]),
      400,
      "This endpoint does not accept bot requests.",
    );
  });

  it("null or an empty value clears; DELETE clears by id", async () => {
    const [phone, pronouns, mentor] = await Promise.all([
      byName("Phone number"),
      byName("Pronouns"),
      byName("Mentor"),
    ]);
    const queue = await openQueue("iago", ["realm_user"]);
    await expectSuccess(
      setData("hamlet", [
        { id: phone, value: null },
        { id: pronouns, value: "" },
      ]),
    );
    const data = await profileData("hamlet");
    expect(data[String(phone)]).toBeUndefined();
    expect(data[String(pronouns)]).toBeUndefined();
    const updates = (await eventsOf("iago", queue)).filter((e) => e.type === "realm_user");
    expect(updates.map((e) => e.person.custom_profile_field)).toEqual([
      { id: phone, value: null },
      { id: pronouns, value: null },
    ]);
    await expectError(clearData("hamlet", [1234]), 400, "Field id 1234 not found.");
    await expectSuccess(clearData("hamlet", [mentor, phone]));
    expect((await profileData("hamlet"))[String(mentor)]).toBeUndefined();
  });

  it("takes data as JSON text in a form body, + for spaces", async () => {
    const bio = await byName("Biography");
    const othello = server.creds.users.othello!;
    const response = await fetch(`${server.baseUrl}/api/v1/users/me/profile_data`, {
      method: "PATCH",
      headers: {
        Authorization:
          "Basic " + Buffer.from(`${othello.email}:${othello.api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body:
        "data=" +
        encodeURIComponent(JSON.stringify([{ id: bio, value: "The Moor" }])).replaceAll("%20", "+"),
    });
    expect(response.status).toBe(200);
    expect((await profileData("othello"))[String(bio)]!.value).toBe("The Moor");
  });
});

describe("statements of a profile data update", () => {
  it("are the same for 2 values as for 8 (checks and writes are set-based)", async () => {
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      const ids: number[] = [];
      for (let i = 0; i < 8; i++) ids.push(await created({ name: `Budget ${i}`, field_type: 1 }));
      const statementsFor = async (count: number, value: string) => {
        seen.length = 0;
        await expectSuccess(
          setData(
            "shiva",
            ids.slice(0, count).map((id) => ({ id, value })),
          ),
        );
        return seen.find((i) => i.operationId === "update-custom-profile-data")!.statements;
      };
      await statementsFor(8, "warm");
      const two = await statementsFor(2, "two");
      const eight = await statementsFor(8, "eight");
      if (process.env.SHOW_STATEMENTS)
        console.log(`profile data: 2 values ${two}, 8 values ${eight}`);
      expect(eight).toBe(two);
    } finally {
      server.deps.observe = undefined;
    }
  });
});

describe("profile data on users and in register", () => {
  it("GET /users and GET /users/{email} include the values when asked", async () => {
    const phone = (await fields()).find((f) => f.name === "Phone number")!.id;
    await expectSuccess(setData("cordelia", [{ id: phone, value: "**42**" }]));
    const { members } = await expectSuccess(
      server
        .as("othello")
        .GET("/users", { params: { query: { include_custom_profile_fields: true } } }),
    );
    const cordelia = members.find((m) => m.user_id === userId("cordelia"))!;
    expect(cordelia.profile_data![String(phone)]).toEqual({
      value: "**42**",
      rendered_value: "<p><strong>42</strong></p>",
    });
    expect(members.find((m) => m.is_bot)).not.toHaveProperty("profile_data");
    expect(members.find((m) => m.user_id === userId("prospero"))!.profile_data).toEqual({});
    const plain = await expectSuccess(server.as("othello").GET("/users"));
    expect(plain.members[0]).not.toHaveProperty("profile_data");
    const { user } = await expectSuccess(
      server.as("othello").GET("/users/{email}", {
        params: {
          path: { email: server.creds.users.cordelia!.email },
          query: { include_custom_profile_fields: true },
        },
      }),
    );
    expect(user.profile_data![String(phone)]!.value).toBe("**42**");
  });

  it("register: custom_profile_fields, custom_profile_field_types and profile_data in realm_users", async () => {
    const state = (await expectSuccess(
      server.as("hamlet").POST("/register", {
        body: { fetch_event_types: ["custom_profile_fields", "realm_user"] },
      }),
    )) as any;
    expect(state.custom_profile_fields).toEqual(await fields());
    expect(state.custom_profile_field_types).toMatchObject({
      SHORT_TEXT: { id: 1, name: "Short text" },
      LONG_TEXT: { id: 2, name: "Paragraph" },
      SELECT: { id: 3, name: "Dropdown" },
      DATE: { id: 4, name: "Date" },
      URL: { id: 5, name: "Link" },
      USER: { id: 6, name: "Users" },
      EXTERNAL_ACCOUNT: { id: 7, name: "External account" },
      PRONOUNS: { id: 8, name: "Pronouns" },
    });
    const phone = state.custom_profile_fields.find((f: any) => f.name === "Phone number").id;
    const cordelia = state.realm_users.find((u: any) => u.user_id === userId("cordelia"));
    expect(cordelia.profile_data[String(phone)].value).toBe("**42**");
    const bot = state.realm_users.find((u: any) => u.is_bot);
    expect(bot).not.toHaveProperty("profile_data");
  });

  it("GET /users with profile data for 1,000 more users runs the same number of statements", async () => {
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    const statements = async () => {
      await expectSuccess(
        server
          .as("hamlet")
          .GET("/users", { params: { query: { include_custom_profile_fields: true } } }),
      );
      seen.length = 0;
      const started = performance.now();
      const { members } = await expectSuccess(
        server
          .as("hamlet")
          .GET("/users", { params: { query: { include_custom_profile_fields: true } } }),
      );
      const n = seen.find((i) => i.operationId === "get-users")!.statements;
      if (process.env.SHOW_STATEMENTS)
        console.log(
          `GET /users, ${members.length} users: ${n} statements, ${Math.round(performance.now() - started)} ms`,
        );
      return { n, members };
    };
    try {
      const before = await statements();
      const realmId = server.creds.realm.id;
      const users = await server.db.userProfile.createManyAndReturn({
        data: Array.from({ length: 1000 }, (_, i) => ({
          realmId,
          email: `scale${i}@zulip.com`,
          deliveryEmail: `scale${i}@zulip.com`,
          fullName: `Scale ${i}`,
          apiKey: `scale${String(i).padStart(27, "0")}`,
        })),
        select: { id: true },
      });
      const phone = await created({ name: "Extension", field_type: 1 });
      await server.db.customProfileFieldValue.createMany({
        data: users.map((u) => ({
          realmId,
          userProfileId: u.id,
          fieldId: phone,
          value: `${u.id}`,
          renderedValue: `<p>${u.id}</p>`,
        })),
      });
      const after = await statements();
      expect(after.members.length).toBe(before.members.length + 1000);
      expect(after.members.find((m) => m.user_id === users[999]!.id)!.profile_data).toEqual({
        [String(phone)]: { value: `${users[999]!.id}`, rendered_value: `<p>${users[999]!.id}</p>` },
      });
      expect(after.n).toBe(before.n);
      expect(after.n).toBeLessThanOrEqual(1);
    } finally {
      server.deps.observe = undefined;
    }
  });
});
