/**
 * The permission engine and group-setting storage: anonymous values updated in place, unused
 * anonymous groups deleted, Zulip's refusals, and cached memberships that follow every change.
 */
import { describe, expect, it } from "vitest";
import { doSubscribe } from "../../server/actions/channels/subscriptions.ts";
import { doCreateUser } from "../../server/actions/users/users.ts";
import { countStatements } from "../../server/db/statements.ts";
import { invalidateCaches } from "../../server/lib/caches.ts";
import {
  can,
  groupMembers,
  isUserInGroup,
  userGroupIds,
} from "../../server/lib/groups/permissions.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body } from "../helpers/builders.ts";

const server = useTestServer();

const patch = (body: Body<"/realm", "patch">) => server.as("iago").PATCH("/realm", { body: body });
const realmRow = () => server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
/** user_group rows without a named_user_group row. */
const anonymousGroupCount = () =>
  server.db.userGroup.count({ where: { realmId: server.creds.realm.id, named: { is: null } } });
const directMembers = async (groupId: number) =>
  (
    await server.db.userGroupMembership.findMany({
      where: { userGroupId: groupId },
      orderBy: { userProfileId: "asc" },
    })
  ).map((m) => m.userProfileId);
const user = (name: string) => server.creds.users[name]!.user_id;
async function systemGroup(name: string) {
  return (
    await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId: server.creds.realm.id, name, isSystemGroup: true },
    })
  ).id;
}

describe("PATCH /realm group settings", () => {
  it("updates an anonymous group in place: two anonymous values leave one group holding the second", async () => {
    const before = await anonymousGroupCount();
    const admins = await systemGroup("role:administrators");
    const { queue_id } = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { event_types: ["realm"] } }),
    );

    const first = await expectSuccess(
      patch({
        can_mention_many_users_group: {
          new: { direct_members: [user("hamlet")], direct_subgroups: [admins] },
        },
      }),
    );
    expect(first.can_mention_many_users_group).toEqual({
      direct_members: [user("hamlet")],
      direct_subgroups: [admins],
    });
    const groupId = (await realmRow()).canMentionManyUsersGroupId;
    expect(await anonymousGroupCount()).toBe(before + 1);

    const second = {
      direct_members: [user("othello"), user("cordelia")].sort((a, b) => a - b),
      direct_subgroups: [],
    };
    expect(
      (await expectSuccess(patch({ can_mention_many_users_group: { new: second } })))
        .can_mention_many_users_group,
    ).toEqual(second);
    expect(await anonymousGroupCount()).toBe(before + 1);
    expect((await realmRow()).canMentionManyUsersGroupId).toBe(groupId);
    expect(await directMembers(groupId)).toEqual(second.direct_members);
    expect(await server.db.groupGroupMembership.count({ where: { supergroupId: groupId } })).toBe(
      0,
    );

    const state = await expectSuccess(server.as("hamlet").POST("/register", { body: {} }));
    expect(state.realm_can_mention_many_users_group).toEqual(second);
    const { events } = await expectSuccess(
      server
        .as("hamlet")
        .GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }),
    );
    expect(events.map((e) => (e as { data?: unknown }).data)).toEqual([
      {
        can_mention_many_users_group: {
          direct_members: [user("hamlet")],
          direct_subgroups: [admins],
        },
      },
      { can_mention_many_users_group: second },
    ]);
    expect(events[0]).toMatchObject({ type: "realm", op: "update_dict", property: "default" });
  });

  it("deletes the anonymous group when a named group replaces it", async () => {
    const anonymous = (await realmRow()).canMentionManyUsersGroupId;
    const before = await anonymousGroupCount();
    const moderators = await systemGroup("role:moderators");
    expect(
      (await expectSuccess(patch({ can_mention_many_users_group: { new: moderators } })))
        .can_mention_many_users_group,
    ).toBe(moderators);
    expect((await realmRow()).canMentionManyUsersGroupId).toBe(moderators);
    expect(await anonymousGroupCount()).toBe(before - 1);
    expect(await server.db.userGroup.findUnique({ where: { id: anonymous } })).toBeNull();
    expect(await server.db.userGroupMembership.count({ where: { userGroupId: anonymous } })).toBe(
      0,
    );
  });

  it("canonicalizes one subgroup to that group and an empty value to role:nobody, creating no group", async () => {
    const before = await anonymousGroupCount();
    const members = await systemGroup("role:members");
    expect(
      (
        await expectSuccess(
          patch({
            can_resolve_topics_group: { new: { direct_members: [], direct_subgroups: [members] } },
          }),
        )
      ).can_resolve_topics_group,
    ).toBe(members);
    const nobody = await systemGroup("role:nobody");
    expect(
      (
        await expectSuccess(
          patch({
            can_resolve_topics_group: { new: { direct_members: [], direct_subgroups: [] } },
          }),
        )
      ).can_resolve_topics_group,
    ).toBe(nobody);
    expect(await anonymousGroupCount()).toBe(before);
    // The current value again: nothing to change.
    const data = await expectSuccess(
      patch({ can_resolve_topics_group: { new: nobody, old: nobody } }),
    );
    expect(data).not.toHaveProperty("can_resolve_topics_group");
  });

  it("refuses a stale `old` with EXPECTATION_MISMATCH and changes nothing", async () => {
    const admins = await systemGroup("role:administrators");
    await expectSuccess(
      patch({
        can_mention_many_users_group: {
          new: { direct_members: [user("hamlet")], direct_subgroups: [admins] },
        },
      }),
    );
    const row = await realmRow();
    const count = await anonymousGroupCount();
    await expectError(
      patch({
        can_mention_many_users_group: {
          new: { direct_members: [user("othello")], direct_subgroups: [] },
          old: { direct_members: [user("cordelia")], direct_subgroups: [admins] },
        },
        allow_message_editing: !row.allowMessageEditing,
      }),
      400,
      "'old' value does not match the expected value.",
      { code: "EXPECTATION_MISMATCH" },
    );
    const after = await realmRow();
    expect({ group: after.canMentionManyUsersGroupId, editing: after.allowMessageEditing }).toEqual(
      { group: row.canMentionManyUsersGroupId, editing: row.allowMessageEditing },
    );
    expect(await directMembers(row.canMentionManyUsersGroupId)).toEqual([user("hamlet")]);
    expect(await anonymousGroupCount()).toBe(count);
    // The right `old`, in any order of its members, is accepted.
    await expectSuccess(
      patch({
        can_mention_many_users_group: {
          new: await systemGroup("role:administrators"),
          old: { direct_members: [user("hamlet")], direct_subgroups: [admins] },
        },
      }),
    );
  });

  it("refuses the system groups a setting may not be, with Zulip's texts, and unknown groups and users", async () => {
    const before = await realmRow();
    await expectError(
      patch({
        can_move_messages_between_channels_group: { new: await systemGroup("role:everyone") },
      }),
      400,
      "'can_move_messages_between_channels_group' setting cannot be set to 'role:everyone' group.",
    );
    await expectError(
      patch({ can_mention_many_users_group: { new: await systemGroup("role:internet") } }),
      400,
      "'can_mention_many_users_group' setting cannot be set to 'role:internet' group.",
    );
    await expectError(
      patch({ can_resolve_topics_group: { new: 424242 } }),
      400,
      "Invalid user group",
    );
    await expectError(
      patch({
        can_resolve_topics_group: {
          new: { direct_members: [user("hamlet")], direct_subgroups: [424242] },
        },
      }),
      400,
      "Invalid user group ID: 424242",
    );
    await expectError(
      patch({
        can_resolve_topics_group: { new: { direct_members: [424242], direct_subgroups: [] } },
      }),
      400,
      "Invalid user ID: 424242",
    );
    const after = await realmRow();
    expect([
      after.canMoveMessagesBetweenChannelsGroupId,
      after.canMentionManyUsersGroupId,
      after.canResolveTopicsGroupId,
    ]).toEqual([
      before.canMoveMessagesBetweenChannelsGroupId,
      before.canMentionManyUsersGroupId,
      before.canResolveTopicsGroupId,
    ]);
  });
});

describe("cached memberships", () => {
  it("follow a change of can_mention_many_users_group for wildcard mentions in a large channel", async () => {
    const realm = await realmRow();
    const verona = server.creds.channels.Verona!.stream_id;
    // Verona has every user of the organization; a few more make it larger than Zulip's threshold (15).
    await server.db.$transaction(async (tx) => {
      const extra = [];
      for (let i = 0; i < 8; i++)
        extra.push(
          await doCreateUser(
            tx,
            realm,
            { email: `extra${i}@zulip.com`, fullName: `Extra ${i}`, role: 400 },
            "zulip.testserver",
          ),
        );
      const stream = await tx.stream.findUniqueOrThrow({ where: { id: verona } });
      await doSubscribe(
        tx,
        realm.id,
        stream,
        extra.map((u) => u.id),
      );
    });
    expect(
      (await server.db.stream.findUniqueOrThrow({ where: { id: verona } })).subscriberCount,
    ).toBeGreaterThan(15);
    const send = () =>
      server.as("hamlet").POST("/messages", {
        body: {
          type: "stream",
          to: "Verona",
          topic: "everyone",
          content: "Hello @**all**",
        },
      });
    const refused = [
      "You do not have permission to use channel wildcard mentions in this channel.",
      { code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED" },
    ] as const;

    const admins = await systemGroup("role:administrators");
    await expectSuccess(patch({ can_mention_many_users_group: { new: admins } }));
    await expectError(send(), 400, ...refused);
    await expectSuccess(
      patch({
        can_mention_many_users_group: {
          new: { direct_members: [user("hamlet")], direct_subgroups: [admins] },
        },
      }),
    );
    await expectSuccess(send());
    // The same anonymous group, without hamlet: his cached groups still name it until the change drops them.
    await expectSuccess(
      patch({
        can_mention_many_users_group: {
          new: { direct_members: [user("othello")], direct_subgroups: [admins] },
        },
      }),
    );
    await expectError(send(), 400, ...refused);
    await expectSuccess(
      server.as("othello").POST("/messages", {
        body: {
          type: "stream",
          to: "Verona",
          topic: "everyone",
          content: "Hello @**all**",
        },
      }),
    );
    await expectSuccess(patch({ can_mention_many_users_group: { new: admins } }));
  });

  it("answers isUserInGroup from the cache: no statement per check once a user's groups are known", async () => {
    const hamlet = { id: user("hamlet"), realmId: server.creds.realm.id };
    const members = await systemGroup("role:members");
    const admins = await systemGroup("role:administrators");
    invalidateCaches(["*"]);
    const counter = { statements: 0 };
    const answers = await countStatements(counter, async () => {
      const out = [];
      for (let i = 0; i < 100; i++)
        out.push(await isUserInGroup(server.db, hamlet, i % 2 ? members : admins));
      return out;
    });
    expect(counter.statements).toBe(1);
    expect(new Set(answers)).toEqual(new Set([true, false]));
    expect(answers[1]).toBe(true);
    expect(answers[0]).toBe(false);
    const realm = await realmRow();
    const again = { statements: 0 };
    await countStatements(again, () =>
      can(server.db, { ...hamlet, role: 400 }, realm, "can_add_custom_emoji_group"),
    );
    expect(again.statements).toBe(0);
  });

  it("reads a transaction's own writes without caching them", async () => {
    const hamlet = { id: user("hamlet"), realmId: server.creds.realm.id };
    const admins = await systemGroup("role:administrators");
    expect(await isUserInGroup(server.db, hamlet, admins)).toBe(false);
    await expect(
      server.db.$transaction(async (tx) => {
        await tx.userGroupMembership.create({
          data: { userGroupId: admins, userProfileId: hamlet.id },
        });
        expect(await isUserInGroup(tx, hamlet, admins)).toBe(true);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await isUserInGroup(server.db, hamlet, admins)).toBe(false);
    expect((await userGroupIds(server.db, hamlet)).has(await systemGroup("role:everyone"))).toBe(
      true,
    );
  });

  it("drops a user's groups on `user:<id>` and an organization's on `groups:<realm id>`, and only then", async () => {
    const hamlet = { id: user("hamlet"), realmId: server.creds.realm.id };
    // The server's own client: the test's `server.db` drops every cache on each write.
    const db = server.deps.db;
    const moderators = await systemGroup("role:moderators");
    // This process also drops the keys of its own transactions when it reads them back from the
    // event log, shortly after commit: let that finish, so that only this test's keys act below.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await isUserInGroup(db, hamlet, moderators)).toBe(false);
    // A write outside the actions, which names no keys: the cache is told by hand here.
    const membership = await db.userGroupMembership.create({
      data: { userGroupId: moderators, userProfileId: hamlet.id },
    });
    try {
      expect(await isUserInGroup(db, hamlet, moderators)).toBe(false);
      invalidateCaches([`user:${user("othello")}`, `groups:${hamlet.realmId + 1000}`]);
      expect(await isUserInGroup(db, hamlet, moderators)).toBe(false);
      invalidateCaches([`user:${hamlet.id}`]);
      expect(await isUserInGroup(db, hamlet, moderators)).toBe(true);
    } finally {
      await db.userGroupMembership.delete({ where: { id: membership.id } });
    }
    expect(await isUserInGroup(db, hamlet, moderators)).toBe(true);
    invalidateCaches([`groups:${hamlet.realmId}`]);
    expect(await isUserInGroup(db, hamlet, moderators)).toBe(false);
  });
});

describe("groupMembers", () => {
  it("returns the active members of the groups and of their subgroups, in one statement", async () => {
    const moderatorsGroup = await systemGroup("role:moderators");
    const counter = { statements: 0 };
    const moderators = await countStatements(counter, () =>
      groupMembers(server.db, server.creds.realm.id, [moderatorsGroup]),
    );
    expect([...moderators].sort((a, b) => a - b)).toEqual(
      [user("desdemona"), user("iago"), user("shiva")].sort((a, b) => a - b),
    );
    expect(counter.statements).toBe(1);
    const everyone = await groupMembers(server.db, server.creds.realm.id, [
      await systemGroup("role:members"),
      await systemGroup("role:everyone"),
    ]);
    expect(everyone.has(user("polonius"))).toBe(true);
    expect(everyone.has(user("hamlet"))).toBe(true);
    expect(await groupMembers(server.db, server.creds.realm.id, [])).toEqual(new Set());
  });
});
