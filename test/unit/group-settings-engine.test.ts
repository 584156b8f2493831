/**
 * The permission engine over the registry on a real database: membership through nested
 * subgroups, guests and settings that refuse role:everyone, and deactivated groups, which no
 * setting may take.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PendingEvents } from "../../server/events/index.ts";
import {
  CHANNEL_GROUP_SETTINGS,
  USER_GROUP_SETTINGS,
} from "../../server/lib/groups/group-settings.ts";
import { groupMembers, hasGroupPermission } from "../../server/lib/groups/permissions.ts";
import { groupForNewSetting } from "../../server/lib/groups/user-groups.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const user = async (name: string) =>
  server.db.userProfile.findFirstOrThrow({
    where: { id: server.creds.users[name]!.user_id },
    select: { id: true, realmId: true, role: true },
  });
async function namedGroup(
  name: string,
  options: { members?: number[]; subgroups?: number[]; deactivated?: boolean } = {},
) {
  const realmId = server.creds.realm.id;
  const nobody = (
    await server.db.namedUserGroup.findFirstOrThrow({ where: { realmId, name: "role:nobody" } })
  ).id;
  const base = await server.db.userGroup.create({ data: { realmId } });
  await server.db.namedUserGroup.create({
    data: {
      id: base.id,
      realmId,
      name,
      deactivated: options.deactivated ?? false,
      canAddMembersGroupId: nobody,
      canJoinGroupId: nobody,
      canLeaveGroupId: nobody,
      canManageGroupId: nobody,
      canMentionGroupId: nobody,
      canRemoveMembersGroupId: nobody,
    },
  });
  for (const userProfileId of options.members ?? [])
    await server.db.userGroupMembership.create({ data: { userGroupId: base.id, userProfileId } });
  for (const subgroupId of options.subgroups ?? [])
    await server.db.groupGroupMembership.create({ data: { supergroupId: base.id, subgroupId } });
  return base.id;
}

describe("the permission engine", () => {
  it("finds a member through a sub-sub-group, and forgets once the chain is cut", async () => {
    const aaron = await user("aaron");
    const bottom = await namedGroup("engine bottom", { members: [aaron.id] });
    const middle = await namedGroup("engine middle", { subgroups: [bottom] });
    const top = await namedGroup("engine top", { subgroups: [middle] });
    const setting = CHANNEL_GROUP_SETTINGS.can_send_message_group;
    expect(
      await hasGroupPermission(server.db, aaron, setting, { canSendMessageGroupId: top }),
    ).toBe(true);
    expect(
      await hasGroupPermission(server.db, await user("othello"), setting, {
        canSendMessageGroupId: top,
      }),
    ).toBe(false);
    expect([...(await groupMembers(server.db, server.creds.realm.id, [top]))]).toEqual([aaron.id]);
    await server.db.groupGroupMembership.deleteMany({
      where: { supergroupId: middle, subgroupId: bottom },
    });
    expect(
      await hasGroupPermission(server.db, aaron, setting, { canSendMessageGroupId: top }),
    ).toBe(false);
  });

  it("never gives a guest a setting that refuses role:everyone, even as a member", async () => {
    const polonius = await user("polonius");
    const group = await namedGroup("engine guests", { members: [polonius.id] });
    expect(
      await hasGroupPermission(
        server.db,
        polonius,
        CHANNEL_GROUP_SETTINGS.can_add_subscribers_group,
        { canAddSubscribersGroupId: group },
      ),
    ).toBe(false);
    expect(
      await hasGroupPermission(server.db, polonius, CHANNEL_GROUP_SETTINGS.can_send_message_group, {
        canSendMessageGroupId: group,
      }),
    ).toBe(true);
  });

  it("refuses a deactivated group as a setting's value, named or as a subgroup", async () => {
    const deactivated = await namedGroup("engine deactivated", { deactivated: true });
    const realmId = server.creds.realm.id;
    const attempt = (value: Parameters<typeof groupForNewSetting>[4]) =>
      server.db.$transaction((tx) =>
        groupForNewSetting(
          tx,
          new PendingEvents(),
          realmId,
          USER_GROUP_SETTINGS.can_mention_group,
          value,
        ),
      );
    await expect(attempt(deactivated)).rejects.toThrow("User group is deactivated.");
    await expect(
      attempt({ direct_members: [], direct_subgroups: [deactivated, deactivated] }),
    ).rejects.toThrow("User group is deactivated.");
    const active = await namedGroup("engine active");
    expect(await attempt(active)).toBe(active);
  });
});
