/**
 * A channel's can_create_topic_group (feature level 441): starting a topic, by sending or by
 * moving messages there, needs it; posting to an existing topic does not (zerver/lib/streams.py
 * check_for_can_create_topic_group_violation).
 */
import { describe, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();
const NO_PERMISSION = "You do not have permission to create new topics in this channel.";

const send = (as: string, topic: string) =>
  server.as(as).POST("/messages", {
    body: { type: "stream", to: "Denmark", topic, content: `in ${topic}` },
  });
/** Who may create topics in Denmark: a system group by name. */
const restrictTopicCreation = async (groupName: string) => {
  const group = await server.db.namedUserGroup.findFirstOrThrow({
    where: { realmId: server.creds.realm.id, name: groupName },
    select: { id: true },
  });
  await server.db.stream.update({
    where: { id: server.creds.channels.Denmark!.stream_id },
    data: { canCreateTopicGroupId: group.id },
  });
};

describe("can_create_topic_group", () => {
  it("refuses a new topic to a user outside the group, and accepts an existing one (any case)", async () => {
    await expectSuccess(send("hamlet", "existing plans"));
    await restrictTopicCreation("role:administrators");
    try {
      await expectError(send("hamlet", "brand new topic"), 400, NO_PERMISSION);
      await expectSuccess(send("hamlet", "Existing Plans"));
      await expectSuccess(send("iago", "an administrator's topic"));
      await expectSuccess(send("hamlet", "an administrator's topic"));
    } finally {
      await restrictTopicCreation("role:everyone");
    }
  });

  it("refuses to move messages into a new topic, but not into an existing one", async () => {
    const { id } = await expectSuccess(send("hamlet", "move source"));
    await expectSuccess(send("iago", "move target"));
    await restrictTopicCreation("role:administrators");
    try {
      const move = (topic: string) =>
        server.as("hamlet").PATCH("/messages/{message_id}", {
          params: { path: { message_id: id } },
          body: { topic },
        });
      await expectError(move("never used"), 400, NO_PERMISSION);
      await expectSuccess(move("move target"));
    } finally {
      await restrictTopicCreation("role:everyone");
    }
  });

  it("lets a bot start a topic when its owner may", async () => {
    const realmId = server.creds.realm.id;
    const group = await server.db.userGroup.create({
      data: {
        realmId,
        directMembers: { create: { userProfileId: server.creds.users.hamlet!.user_id } },
      },
    });
    await server.db.stream.update({
      where: { id: server.creds.channels.Denmark!.stream_id },
      data: { canCreateTopicGroupId: group.id },
    });
    try {
      await expectSuccess(send("default-bot", "the bot's topic"));
      await expectError(send("othello", "othello's topic"), 400, NO_PERMISSION);
    } finally {
      await restrictTopicCreation("role:everyone");
      await server.db.userGroup.delete({ where: { id: group.id } });
    }
  });

  it("lets nobody start a topic when the group is role:nobody", async () => {
    await restrictTopicCreation("role:nobody");
    try {
      await expectError(send("desdemona", "owners too"), 400, NO_PERMISSION);
    } finally {
      await restrictTopicCreation("role:everyone");
    }
  });
});
