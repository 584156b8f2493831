/**
 * Group mentions go through the permission engine: a group is mentioned only by its
 * can_mention_group, and its members (through subgroups too) get the `mentioned` flag.
 */
import { describe, expect, it } from "vitest";
import { getSystemGroupIds, SystemGroups } from "../../server/lib/groups/user-groups.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();

/** A named group of the development organization, with members and an optional subgroup. */
async function createGroup(
  name: string,
  members: string[],
  options: { subgroupId?: number; canMention?: number } = {},
) {
  const realmId = server.creds.realm.id;
  const system = await getSystemGroupIds(server.db, realmId);
  const group = await server.db.userGroup.create({ data: { realmId } });
  const nobody = system[SystemGroups.NOBODY];
  await server.db.namedUserGroup.create({
    data: {
      id: group.id,
      realmId,
      name,
      description: "",
      canAddMembersGroupId: nobody,
      canJoinGroupId: nobody,
      canLeaveGroupId: nobody,
      canManageGroupId: nobody,
      canMentionGroupId: options.canMention ?? system[SystemGroups.EVERYONE],
      canRemoveMembersGroupId: nobody,
    },
  });
  await server.db.userGroupMembership.createMany({
    data: members.map((m) => ({
      userGroupId: group.id,
      userProfileId: server.creds.users[m]!.user_id,
    })),
  });
  if (options.subgroupId)
    await server.db.groupGroupMembership.create({
      data: { supergroupId: group.id, subgroupId: options.subgroupId },
    });
  return group.id;
}

async function flagsOf(shortName: string, messageId: number) {
  const { message } = await expectSuccess(
    server
      .as(shortName)
      .GET("/messages/{message_id}", { params: { path: { message_id: messageId } } }),
  );
  return message.flags;
}

describe("group mentions", () => {
  it("mention the group's members, through its subgroups too, and nobody else", async () => {
    const inner = await createGroup("inner circle", ["cordelia"]);
    await createGroup("support", ["othello"], { subgroupId: inner });
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "groups", content: "Ping @*support*" },
      }),
    );
    expect(await flagsOf("othello", id)).toContain("mentioned");
    expect(await flagsOf("cordelia", id)).toContain("mentioned");
    expect(await flagsOf("iago", id)).not.toContain("mentioned");
  });

  it("does not mention anyone for a silent group mention", async () => {
    await createGroup("quiet ones", ["othello"]);
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "groups", content: "FYI @_*quiet ones*" },
      }),
    );
    expect(await flagsOf("othello", id)).not.toContain("mentioned");
  });

  it("refuses a mention by someone outside the group's can_mention_group, and sends nothing", async () => {
    const system = await getSystemGroupIds(server.db, server.creds.realm.id);
    await createGroup("admins only", ["othello"], {
      canMention: system[SystemGroups.ADMINISTRATORS],
    });
    const before = await server.db.message.count();
    await expectError(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "groups", content: "Hey @*admins only*" },
      }),
      400,
      "You are not allowed to mention user group 'admins only'.",
    );
    expect(await server.db.message.count()).toBe(before);
    const { id } = await expectSuccess(
      server.as("iago").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "groups", content: "Hey @*admins only*" },
      }),
    );
    expect(await flagsOf("othello", id)).toContain("mentioned");
  });
});
