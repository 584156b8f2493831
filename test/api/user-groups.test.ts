/**
 * User groups: create, list, PATCH (name, description, settings with `old`, reactivation),
 * deactivation and its objections, members and subgroups, and their events
 * (zerver/tests/test_user_groups.py).
 */
import { describe, expect, it } from "vitest";
import { encodeParam } from "../../client/src/index.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, sendToChannel } from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;
const systemGroup = async (name: string) =>
  (
    await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId: server.creds.realm.id, name },
    })
  ).id;
const create = (
  as: string,
  body: Omit<Body<"/user_groups/create", "post">, "description" | "members"> & {
    description?: string;
    members?: number[];
  },
) => server.as(as).POST("/user_groups/create", { body: { description: "", members: [], ...body } });
const edit = (as: string, groupId: number, body: Body<"/user_groups/{user_group_id}", "patch">) =>
  server.as(as).PATCH("/user_groups/{user_group_id}", {
    params: { path: { user_group_id: groupId } },
    body: body,
  });
const members = (
  as: string,
  groupId: number,
  body: Body<"/user_groups/{user_group_id}/members", "post">,
) =>
  server.as(as).POST("/user_groups/{user_group_id}/members", {
    params: { path: { user_group_id: groupId } },
    body: body,
  });
const subgroups = (
  as: string,
  groupId: number,
  body: Body<"/user_groups/{user_group_id}/subgroups", "post">,
) =>
  server.as(as).POST("/user_groups/{user_group_id}/subgroups", {
    params: { path: { user_group_id: groupId } },
    body: body,
  });
const deactivate = (as: string, groupId: number) =>
  server.as(as).POST("/user_groups/{user_group_id}/deactivate", {
    params: { path: { user_group_id: groupId } },
  });
const group = async (groupId: number) =>
  (
    await expectSuccess(
      server
        .as("iago")
        .GET("/user_groups", { params: { query: { include_deactivated_groups: true } } }),
    )
  ).user_groups.find((g) => g.id === groupId)!;
const newGroup = async (name: string, extra: Record<string, unknown> = {}) =>
  (await expectSuccess(create("hamlet", { name, members: [id("hamlet")], ...extra }))).group_id;

describe("POST /user_groups/create and GET /user_groups", () => {
  it("creates a group with the creator managing it, and tells everyone", async () => {
    const queue = (
      await expectSuccess(
        server.as("othello").POST("/register", { body: { event_types: ["user_group"] } }),
      )
    ).queue_id!;
    const groupId = await newGroup("hamletcharacters", {
      description: "Characters of Hamlet",
      members: [id("hamlet"), id("cordelia")],
    });
    expect(await group(groupId)).toMatchObject({
      name: "hamletcharacters",
      members: [id("hamlet"), id("cordelia")].sort((a, b) => a - b),
      is_system_group: false,
      deactivated: false,
      creator_id: id("hamlet"),
      can_manage_group: { direct_members: [id("hamlet")], direct_subgroups: [] },
      can_join_group: await systemGroup("role:nobody"),
    });
    const events = (
      await expectSuccess(
        server.as("othello").GET("/events", {
          params: { query: { queue_id: queue, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events as any[];
    expect(events.find((e) => e.type === "user_group")).toMatchObject({
      op: "add",
      group: { id: groupId, name: "hamletcharacters" },
    });
    const listed = await expectSuccess(
      server.as("polonius").GET("/user_groups", { params: { query: {} } }),
    );
    expect(listed.user_groups.some((g) => g.name === "role:members" && g.is_system_group)).toBe(
      true,
    );
  });

  it("checks names, members, subgroups and roles", async () => {
    await expectError(create("polonius", { name: "guests" }), 400, "Not allowed for guest users");
    await expectError(
      create("hamlet", { name: "x".repeat(101) }),
      400,
      "User group name cannot exceed 100 characters.",
    );
    await expectError(create("hamlet", { name: "   " }), 400, "User group name can't be empty!");
    for (const prefix of ["@", "role:", "user:", "stream:", "channel:"])
      await expectError(
        create("hamlet", { name: `${prefix}x` }),
        400,
        `User group name cannot start with '${prefix}'.`,
      );
    await expectError(
      create("hamlet", { name: "hamletcharacters" }),
      400,
      "User group 'hamletcharacters' already exists.",
    );
    await expectError(
      create("hamlet", { name: "bad member", members: [1111] }),
      400,
      "Invalid user ID: 1111",
    );
    await expectError(
      create("hamlet", { name: "bad subgroup", subgroups: [123456] }),
      400,
      "Invalid user group ID: 123456",
    );
    await expectError(
      create("hamlet", { name: "internet", can_mention_group: await systemGroup("role:internet") }),
      400,
      "'can_mention_group' setting cannot be set to 'role:internet' group.",
    );
  });
});

describe("PATCH /user_groups/{user_group_id}", () => {
  it("renames and re-describes; answers Zulip's errors", async () => {
    const groupId = await newGroup("patchable");
    await expectSuccess(
      edit("hamlet", groupId, { name: "help", description: "Troubleshooting team" }),
    );
    expect(await group(groupId)).toMatchObject({
      name: "help",
      description: "Troubleshooting team",
    });
    await expectError(edit("hamlet", groupId, {}), 400, "No new data supplied");
    await expectError(edit("hamlet", 123456, { name: "x" }), 400, "Invalid user group");
    await expectError(
      edit("hamlet", groupId, { name: "hamletcharacters" }),
      400,
      "User group 'hamletcharacters' already exists.",
    );
    await expectError(
      edit("hamlet", groupId, { name: "role:x" }),
      400,
      "User group name cannot start with 'role:'.",
    );
    await expectError(
      edit("hamlet", await systemGroup("role:members"), { description: "x" }),
      400,
      "Insufficient permission",
    );
    await expectError(
      edit("othello", groupId, { description: "x" }),
      400,
      "Insufficient permission",
    );
    await expectError(
      edit("polonius", groupId, { description: "x" }),
      400,
      "Not allowed for guest users",
    );
    // Administrators manage every group; bots may call it (feature level 496).
    await expectSuccess(edit("iago", groupId, { description: "By an administrator" }));
    await expectError(
      edit("default-bot", groupId, { description: "x" }),
      400,
      "Insufficient permission",
    );
  });

  it("updates settings with `old` checked, an empty anonymous value meaning role:nobody", async () => {
    const groupId = await newGroup("settings group");
    const moderators = await systemGroup("role:moderators");
    await expectError(
      edit("hamlet", groupId, { can_mention_group: { new: await systemGroup("role:internet") } }),
      400,
      "'can_mention_group' setting cannot be set to 'role:internet' group.",
    );
    await expectError(
      edit("hamlet", groupId, { can_manage_group: { new: await systemGroup("role:everyone") } }),
      400,
      "'can_manage_group' setting cannot be set to 'role:everyone' group.",
    );
    await expectError(
      edit("hamlet", groupId, { can_mention_group: { new: 123456 } }),
      400,
      "Invalid user group",
    );
    await expectError(
      edit("hamlet", groupId, {
        can_mention_group: { new: { direct_members: [1111], direct_subgroups: [] } },
      }),
      400,
      "Invalid user ID: 1111",
    );
    await expectError(
      edit("hamlet", groupId, {
        can_mention_group: { new: moderators, old: await systemGroup("role:members") },
      }),
      400,
      "'old' value does not match the expected value.",
      { code: "EXPECTATION_MISMATCH" },
    );
    await expectSuccess(
      edit("hamlet", groupId, {
        can_mention_group: { new: moderators, old: await systemGroup("role:everyone") },
      }),
    );
    expect((await group(groupId)).can_mention_group).toBe(moderators);
    await expectSuccess(
      edit("hamlet", groupId, {
        can_join_group: { new: { direct_members: [], direct_subgroups: [] } },
      }),
    );
    expect((await group(groupId)).can_join_group).toBe(await systemGroup("role:nobody"));
    await expectSuccess(
      edit("hamlet", groupId, {
        can_leave_group: {
          new: { direct_members: [id("othello")], direct_subgroups: [moderators] },
        },
      }),
    );
    expect((await group(groupId)).can_leave_group).toEqual({
      direct_members: [id("othello")],
      direct_subgroups: [moderators],
    });
  });

  it("keeps a deactivated group editable, refuses it in settings, and reactivates it with deactivated=false", async () => {
    const groupId = await newGroup("to deactivate");
    const other = await newGroup("other group");
    await expectSuccess(deactivate("hamlet", groupId));
    expect(
      (
        await expectSuccess(server.as("hamlet").GET("/user_groups", { params: { query: {} } }))
      ).user_groups.some((g) => g.id === groupId),
    ).toBe(false);
    await expectSuccess(
      edit("hamlet", groupId, {
        name: "deactivated but renamed",
        can_mention_group: { new: await systemGroup("role:members") },
      }),
    );
    await expectError(
      edit("hamlet", other, { can_mention_group: { new: groupId } }),
      400,
      "User group is deactivated.",
    );
    await expectError(
      members("hamlet", groupId, { add: [id("othello")] }),
      400,
      "User group is deactivated.",
    );
    await expectSuccess(edit("hamlet", groupId, { deactivated: true }));
    expect(await group(groupId)).toMatchObject({
      deactivated: true,
      name: "deactivated but renamed",
    });
    await expectSuccess(edit("hamlet", groupId, { deactivated: false, description: "back" }));
    expect(await group(groupId)).toMatchObject({ deactivated: false, description: "back" });
  });

  it("takes the setting as JSON text in a form body and the query string, as zulip-js sends it", async () => {
    const groupId = await newGroup("form group");
    const hamlet = server.creds.users.hamlet!;
    const update = encodeParam({
      new: await systemGroup("role:members"),
      old: await systemGroup("role:everyone"),
    });
    const response = await fetch(
      `${server.baseUrl}/api/v1/user_groups/${groupId}?description=From+the+query`,
      {
        method: "PATCH",
        headers: {
          Authorization:
            "Basic " + Buffer.from(`${hamlet.email}:${hamlet.api_key}`).toString("base64"),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: `can_mention_group=${encodeURIComponent(update)}`,
      },
    );
    expect(response.status).toBe(200);
    expect(await group(groupId)).toMatchObject({
      description: "From the query",
      can_mention_group: await systemGroup("role:members"),
    });
  });
});

describe("POST /user_groups/{user_group_id}/deactivate", () => {
  it("makes the group unmentionable", async () => {
    const groupId = await newGroup("mentionable", { members: [id("hamlet"), id("othello")] });
    const mention = async () => {
      const { id: messageId } = await sendToChannel(server.as("hamlet"), {
        to: "Verona",
        topic: "groups",
        content: "hi @*mentionable*",
      });
      return (
        await expectSuccess(
          server
            .as("othello")
            .GET("/messages/{message_id}", { params: { path: { message_id: messageId } } }),
        )
      ).message;
    };
    expect((await mention()).content).toContain(`data-user-group-id="${groupId}"`);
    await expectSuccess(deactivate("hamlet", groupId));
    const after = await mention();
    expect(after.content).not.toContain("data-user-group-id");
    expect(after.flags).not.toContain("mentioned");
  });

  it("refuses a group in use, with Zulip's objections, and system groups", async () => {
    const used = await newGroup("in use");
    const holder = await newGroup("holder");
    await expectSuccess(
      edit("hamlet", holder, {
        can_mention_group: {
          new: {
            direct_members: [],
            direct_subgroups: [used, await systemGroup("role:moderators")],
          },
        },
      }),
    );
    const response = await deactivate("hamlet", used);
    expect(response.response.status).toBe(400);
    expect(response.error).toMatchObject({
      code: "CANNOT_DEACTIVATE_GROUP_IN_USE",
      msg: "Cannot deactivate user group in use.",
      objections: [{ type: "user_group", group_id: holder, settings: ["can_mention_group"] }],
    });
    await expectError(
      deactivate("iago", await systemGroup("role:members")),
      400,
      "Insufficient permission",
    );
    await expectError(deactivate("othello", holder), 400, "Insufficient permission");
  });
});

describe("members and subgroups", () => {
  it("adds and removes members with the group's permissions, and the permission cache follows", async () => {
    const groupId = await newGroup("joinable");
    await expectError(
      members("othello", groupId, { add: [id("othello")] }),
      400,
      "Insufficient permission",
    );
    await expectSuccess(
      edit("hamlet", groupId, { can_join_group: { new: await systemGroup("role:members") } }),
    );
    await expectSuccess(members("othello", groupId, { add: [id("othello")] }));
    await expectError(
      members("othello", groupId, { add: [id("cordelia")] }),
      400,
      "Insufficient permission",
    );
    await expectError(
      members("hamlet", groupId, { add: [id("othello")] }),
      400,
      `User ${id("othello")} is already a member of this group`,
    );
    await expectError(
      members("hamlet", groupId, { delete: [id("aaron")] }),
      400,
      `There is no member '${id("aaron")}' in this user group`,
    );
    await expectError(
      members("hamlet", groupId, {}),
      400,
      'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
    );
    const isMember = async (userId: number) =>
      (
        await expectSuccess(
          server.as("hamlet").GET("/user_groups/{user_group_id}/members/{user_id}", {
            params: { path: { user_group_id: groupId, user_id: userId }, query: {} },
          }),
        )
      ).is_user_group_member;
    expect(await isMember(id("othello"))).toBe(true);
    // Leaving oneself: can_leave_group is role:everyone by default.
    await expectSuccess(members("othello", groupId, { delete: [id("othello")] }));
    expect(await isMember(id("othello"))).toBe(false);
    // Added by someone else, a user hears it from Notification Bot; joining oneself sends nothing.
    await expectSuccess(members("hamlet", groupId, { add: [id("cordelia")] }));
    const dm = (
      await expectSuccess(
        server.as("cordelia").GET("/messages", {
          params: {
            query: {
              anchor: "newest",
              num_before: 1,
              num_after: 0,
              narrow: [{ operator: "is", operand: "dm" }],
            },
          },
        }),
      )
    ).messages.at(-1)!;
    expect(dm.sender_email).toBe("notification-bot@zulip.com");
    expect(dm.content).toContain("added you to the group");
    expect(dm.content).toContain(`data-user-group-id="${groupId}"`);
    // A channel permission held through the group follows its membership at once.
    await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: {
          name: "joinable only",
          subscribers: [id("hamlet")],
          can_send_message_group: groupId,
        },
      }),
    );
    const post = (as: string) =>
      server.as(as).POST("/messages", {
        body: { type: "stream", to: "joinable only", topic: "t", content: "hi" },
      });
    await expectError(post("othello"), 400, "You do not have permission to post in this channel.");
    await expectSuccess(members("othello", groupId, { add: [id("othello")] }));
    await expectSuccess(post("othello"));
  });

  it("adds subgroups without cycles, and members of nested subgroups count", async () => {
    const top = await newGroup("top");
    const middle = await newGroup("middle", { members: [] });
    const bottom = await newGroup("bottom", { members: [id("aaron")] });
    await expectSuccess(subgroups("hamlet", top, { add: [middle] }));
    await expectSuccess(subgroups("hamlet", middle, { add: [bottom] }));
    await expectError(
      subgroups("hamlet", bottom, { add: [top] }),
      400,
      `User group ${bottom} is already a subgroup of one of the passed subgroups.`,
    );
    await expectError(
      subgroups("hamlet", top, {}),
      400,
      'Nothing to do. Specify at least one of "add" or "delete".',
    );
    await expectError(
      subgroups("hamlet", top, { add: [middle] }),
      400,
      `User group ${middle} is already a subgroup of this group.`,
    );
    await expectError(
      subgroups("hamlet", top, { delete: [bottom] }),
      400,
      `User group ${bottom} is not a subgroup of this group.`,
    );
    const all = await expectSuccess(
      server.as("hamlet").GET("/user_groups/{user_group_id}/members", {
        params: { path: { user_group_id: top }, query: {} },
      }),
    );
    expect(all.members).toContain(id("aaron"));
    const direct = await expectSuccess(
      server.as("hamlet").GET("/user_groups/{user_group_id}/members", {
        params: { path: { user_group_id: top }, query: { direct_member_only: true } },
      }),
    );
    expect(direct.members).not.toContain(id("aaron"));
    const subs = await expectSuccess(
      server.as("hamlet").GET("/user_groups/{user_group_id}/subgroups", {
        params: { path: { user_group_id: top }, query: {} },
      }),
    );
    expect(subs.subgroups).toEqual([middle, bottom].sort((a, b) => a - b));
    await expectSuccess(subgroups("hamlet", middle, { delete: [bottom] }));
  });

  it("register carries the groups", async () => {
    const state = (await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["user_group"] } }),
    )) as any;
    expect(state.realm_user_groups.map((g: any) => g.name)).toEqual(
      expect.arrayContaining(["role:members", "hamletcharacters"]),
    );
  });
});
