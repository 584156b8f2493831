/**
 * user_message's integrity without per-row foreign keys (migration
 * user_message_statement_integrity): a send's rows are checked once per statement, a row naming a
 * missing message or user fails as a foreign key does (SQLSTATE 23503) and leaves nothing, and
 * deleting a message or a user deletes their rows. On PostgreSQL, a message being deleted by a
 * transaction still running holds back an insert naming it, which then fails, as a foreign key's
 * lock does.
 */
import { describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { sendToChannel } from "../helpers/builders.ts";

const server = useTestServer();
const userId = (name: string) => server.creds.users[name]!.user_id;

describe("user_message integrity", () => {
  it("gives every recipient of a send their row, and refuses rows naming a missing message or user", async () => {
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "integrity",
      content: "rows",
    });
    const subscribers = await server.db.subscription.count({
      where: { recipient: { stream: { name: "Verona" } }, active: true },
    });
    expect(await server.db.userMessage.count({ where: { messageId: id } })).toBe(subscribers);

    const [outsider] = await server.db.$queryRaw<{ id: number }[]>`
      SELECT u.id FROM user_profile u
      WHERE u.realm_id = (SELECT realm_id FROM message WHERE id = ${id})
        AND NOT EXISTS (SELECT 1 FROM user_message x WHERE x.user_profile_id = u.id AND x.message_id = ${id})
      LIMIT 1`;
    const missingMessage =
      (await server.db.message.aggregate({ _max: { id: true } }))._max.id! + 1000;
    await expect(
      server.db.$executeRaw`INSERT INTO user_message (user_profile_id, message_id, flags)
        VALUES (${outsider!.id}, ${id}, 0), (${outsider!.id}, ${missingMessage}, 0)`,
    ).rejects.toThrow("user_message_message_id_fkey");
    await expect(
      server.db.$executeRaw`INSERT INTO user_message (user_profile_id, message_id, flags)
        VALUES (${outsider!.id}, ${id}, 0), (999999, ${id}, 0)`,
    ).rejects.toThrow("user_message_user_profile_id_fkey");
    await expect(
      server.db.$executeRaw`UPDATE user_message SET message_id = ${missingMessage}
        WHERE message_id = ${id} AND user_profile_id = ${userId("hamlet")}`,
    ).rejects.toThrow("user_message_message_id_fkey");
    // Nothing of the refused statements stayed.
    expect(await server.db.userMessage.count({ where: { messageId: id } })).toBe(subscribers);
    expect(await server.db.userMessage.count({ where: { messageId: missingMessage } })).toBe(0);
  });

  it("deletes a message's rows with it, and a user's with them", async () => {
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "integrity",
      content: "to be deleted",
    });
    expect(await server.db.userMessage.count({ where: { messageId: id } })).toBeGreaterThan(1);
    await expectSuccess(
      server.as("iago").DELETE("/messages/{message_id}", { params: { path: { message_id: id } } }),
    );
    expect(await server.db.userMessage.count({ where: { messageId: id } })).toBe(0);

    // A user is never deleted while their organization lives; when one is (a test's own row),
    // their rows go with them.
    const realmId = (
      await server.db.userProfile.findUniqueOrThrow({ where: { id: userId("hamlet") } })
    ).realmId;
    const [temp] = await server.db.$queryRaw<{ id: number }[]>`
      INSERT INTO user_profile (realm_id, email, delivery_email, full_name, api_key, date_joined, tos_version)
      SELECT ${realmId}, 'temp-integrity@zulip.com', 'temp-integrity@zulip.com', 'Temp', 'temp-integrity-key', now(), '-1'
      RETURNING id`;
    const { id: other } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "integrity",
      content: "kept",
    });
    await server.db
      .$executeRaw`INSERT INTO user_message (user_profile_id, message_id, flags) VALUES (${temp!.id}, ${other}, 0)`;
    expect(await server.db.userMessage.count({ where: { userProfileId: temp!.id } })).toBe(1);
    await server.db.$executeRaw`DELETE FROM user_profile WHERE id = ${temp!.id}`;
    expect(await server.db.userMessage.count({ where: { userProfileId: temp!.id } })).toBe(0);
    expect(await server.db.userMessage.count({ where: { messageId: other } })).toBeGreaterThan(0);
  });

  it.runIf(process.env.DATABASE_URL)(
    "holds back an insert naming a message another transaction is deleting, then refuses it",
    async () => {
      const { id } = await sendToChannel(server.as("hamlet"), {
        to: "Verona",
        topic: "integrity",
        content: "deleted meanwhile",
      });
      const [outsider] = await server.db.$queryRaw<{ id: number }[]>`
        SELECT u.id FROM user_profile u
        WHERE u.realm_id = (SELECT realm_id FROM message WHERE id = ${id})
          AND NOT EXISTS (SELECT 1 FROM user_message x WHERE x.user_profile_id = u.id AND x.message_id = ${id})
        LIMIT 1`;
      let releaseDelete!: () => void;
      const held = new Promise<void>((r) => (releaseDelete = r));
      let deleted!: () => void;
      const deleting = new Promise<void>((r) => (deleted = r));
      const deleter = server.db.$transaction(
        async (tx) => {
          await tx.$executeRaw`DELETE FROM message WHERE id = ${id}`;
          deleted();
          await held;
        },
        { timeout: 20_000 },
      );
      try {
        await deleting;
        let insertSettled = false;
        const insert = server.db
          .$executeRaw`INSERT INTO user_message (user_profile_id, message_id, flags)
          VALUES (${outsider!.id}, ${id}, 0)`.finally(() => (insertSettled = true));
        const outcome = expect(insert).rejects.toThrow("user_message_message_id_fkey");
        await new Promise((r) => setTimeout(r, 300));
        // Waiting on the deleting transaction's lock of the message.
        expect(insertSettled).toBe(false);
        releaseDelete();
        await deleter;
        await outcome;
      } finally {
        releaseDelete();
      }
      expect(await server.db.userMessage.count({ where: { messageId: id } })).toBe(0);
    },
  );
});
