/**
 * The message retention policy (zerver/tests/test_retention.py): the organization's and the
 * channels' message_retention_days, direct messages following the organization, each message
 * archived once by loops sharing the database, delete_message events (feature level 452) from the
 * running loop; the archive cleaned after
 * ARCHIVED_DATA_VACUUMING_DELAY_DAYS and unclaimed uploads deleted after their delay.
 */
import { afterAll, describe, expect, it } from "vitest";
import { MessageRetention } from "../../server/workers/retention.ts";
import { uploadStorage } from "../../server/lib/uploads/upload-storage.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { uploadFile } from "../helpers/upload.ts";
import { sendDirect, sendToChannel } from "../helpers/builders.ts";

const server = useTestServer();
const loops: MessageRetention[] = [];
/** A retention loop on the test server's database, run by hand (`deliverDue`). */
const loop = () => {
  const l = new MessageRetention(server.deps, { intervalMs: 3_600_000 });
  loops.push(l);
  return l;
};
afterAll(() => Promise.all(loops.map((l) => l.stop())));

const id = (shortName: string) => server.creds.users[shortName]!.user_id;
const channel = (name: string) => server.creds.channels[name]!.stream_id;
const DAY = 86_400_000;
const backdate = (ids: number[], days: number) =>
  server.db.message.updateMany({
    where: { id: { in: ids } },
    data: { dateSent: new Date(Date.now() - days * DAY) },
  });
const exists = async (messageId: number) =>
  (await server.db.message.count({ where: { id: messageId } })) === 1;
const setRealmRetention = (days: number | null) =>
  server.db.realm.update({
    where: { id: server.creds.realm.id },
    data: { messageRetentionDays: days },
  });
const setChannelRetention = (name: string, days: number | null) =>
  server.db.stream.update({ where: { id: channel(name) }, data: { messageRetentionDays: days } });

describe("message retention", () => {
  it("keeps everything while no policy is set", async () => {
    const { id: m } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "forever",
      content: "hello",
    });
    await backdate([m], 10_000);
    expect((await loop().deliverDue()).archived).toBe(0);
    expect(await exists(m)).toBe(true);
  });

  it("a channel's setting overrides the organization's; direct messages follow the organization; events", async () => {
    const { id: verona } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "retention",
      content: "hello",
    }); // Verona: -1, forever
    const { id: denmark } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "retention",
      content: "hello",
    }); // Denmark: 5 days
    const { id: denmarkRecent } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "retention",
      content: "hello",
    });
    const { id: scotland } = await sendToChannel(server.as("hamlet"), {
      to: "Scotland",
      topic: "retention",
      content: "hello",
    }); // the organization's 30 days
    const { id: scotlandRecent } = await sendToChannel(server.as("hamlet"), {
      to: "Scotland",
      topic: "retention",
      content: "hello",
    });
    const { id: dmOld } = await sendDirect(server.as("hamlet"), {
      to: [id("othello")],
      content: "psst",
    });
    const { id: dmRecent } = await sendDirect(server.as("hamlet"), {
      to: [id("othello")],
      content: "psst",
    });
    await backdate([verona, scotland, dmOld], 31);
    await backdate([denmark, scotlandRecent, dmRecent], 6);
    await backdate([denmarkRecent], 4);

    const { queue_id } = await expectSuccess(
      server.as("othello").POST("/register", { body: { event_types: ["delete_message"] } }),
    );
    await setRealmRetention(30);
    await setChannelRetention("Verona", -1);
    await setChannelRetention("Denmark", 5);
    try {
      const report = await loop().deliverDue();
      expect(report.archived).toBeGreaterThanOrEqual(3);
      expect(
        Object.fromEntries(
          await Promise.all(
            Object.entries({
              verona,
              denmark,
              denmarkRecent,
              scotland,
              scotlandRecent,
              dmOld,
              dmRecent,
            }).map(async ([name, m]) => [name, await exists(m)]),
          ),
        ),
      ).toEqual({
        verona: true,
        denmark: false,
        denmarkRecent: true,
        scotland: false,
        scotlandRecent: true,
        dmOld: false,
        dmRecent: true,
      });
      const archived = await server.db.archivedMessage.findMany({
        where: { id: { in: [denmark, scotland, dmOld] } },
        include: { archiveTransaction: true, userMessages: true },
      });
      expect(archived.map((a) => a.archiveTransaction.type)).toEqual([1, 1, 1]);
      expect(archived.every((a) => a.userMessages.length > 0)).toBe(true);
      // Feature level 452: the recipients are told (Othello's client, without
      // bulk_message_deletion, one event per message); nothing of what stays.
      const { events } = await expectSuccess(
        server.as("othello").GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      );
      expect(events).toContainEqual(
        expect.objectContaining({
          type: "delete_message",
          message_id: dmOld,
          message_type: "private",
        }),
      );
      const told = events.flatMap((e) => ("message_id" in e ? [e.message_id] : []));
      for (const kept of [verona, denmarkRecent, scotlandRecent, dmRecent])
        expect(told).not.toContain(kept);
    } finally {
      await setRealmRetention(null);
      await setChannelRetention("Verona", null);
      await setChannelRetention("Denmark", null);
    }
  });

  it("the running loop sends delete_message, one per channel topic, to who had the messages (feature level 452)", async () => {
    const send = async (to: string, topic: string) =>
      (await sendToChannel(server.as("othello"), { to, topic, content: "old" })).id;
    const a = await send("Venice", "run452");
    const b = await send("Venice", "run452");
    const other = await send("Venice", "Run452 other");
    await backdate([a, b, other], 40);
    const { queue_id } = await expectSuccess(
      server.as("prospero").POST("/register", {
        body: {
          event_types: ["delete_message"],
          client_capabilities: { bulk_message_deletion: true },
        },
      }),
    );
    // Hamlet is not subscribed to Venice: he never had them.
    const outsider = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { event_types: ["delete_message"] } }),
    );
    await setRealmRetention(30);
    const running = new MessageRetention(server.deps, { intervalMs: 50 });
    loops.push(running);
    try {
      running.start();
      const seen: unknown[] = [];
      let last = -1;
      const deadline = Date.now() + 20_000;
      while (seen.length < 2 && Date.now() < deadline) {
        const { events } = await expectSuccess(
          server.as("prospero").GET("/events", {
            params: { query: { queue_id: queue_id!, last_event_id: last } },
          }),
        );
        for (const e of events) {
          last = Math.max(last, e.id);
          if (e.type === "delete_message" && "topic" in e && e.topic?.startsWith("run452"))
            seen.push({ ...e, id: undefined });
        }
      }
      const event = (ids: number[], topic: string) => ({
        id: undefined,
        type: "delete_message",
        message_ids: ids,
        stream_id: channel("Venice"),
        topic,
        message_type: "stream",
      });
      expect(seen).toEqual(
        expect.arrayContaining([event([a, b], "run452"), event([other], "run452 other")]),
      );
      expect(seen).toHaveLength(2);
      expect(await exists(a)).toBe(false);
      const { events: outsiderEvents } = await expectSuccess(
        server.as("hamlet").GET("/events", {
          params: { query: { queue_id: outsider.queue_id!, last_event_id: -1, dont_block: true } },
        }),
      );
      expect(
        outsiderEvents.filter((e) => "message_id" in e && [a, b, other].includes(e.message_id!)),
      ).toEqual([]);
    } finally {
      await running.stop();
      await setRealmRetention(null);
    }
  });

  it("two loops on one database archive each message exactly once", async () => {
    const { id: seed } = await sendToChannel(server.as("hamlet"), {
      to: "Rome",
      topic: "expired",
      content: "hello",
    });
    await server.db.$executeRawUnsafe(
      `INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, sending_client_id, is_channel_message, date_sent)
       SELECT realm_id, sender_id, recipient_id, subject, 'copy ' || n, rendered_content, sending_client_id, true, now() - interval '40 days'
       FROM message m, generate_series(1, 449) AS n WHERE m.id = ${seed}`,
    );
    await backdate([seed], 40);
    const expired = await server.db.message.findMany({
      where: { subject: "expired" },
      select: { id: true },
    });
    expect(expired).toHaveLength(450);
    await setChannelRetention("Rome", 30);
    try {
      const [a, b] = await Promise.all([loop().deliverDue(), loop().deliverDue()]);
      if (process.env.SHOW_STATEMENTS) console.log("retention split", a.archived, b.archived);
      expect(a.archived + b.archived).toBe(450);
      expect(await server.db.message.count({ where: { subject: "expired" } })).toBe(0);
      expect(
        await server.db.archivedMessage.count({ where: { id: { in: expired.map((m) => m.id) } } }),
      ).toBe(450);
      // In batches of 100 channel messages (retention.py STREAM_MESSAGE_BATCH_SIZE).
      const transactions = await server.db.archivedMessage.groupBy({
        by: ["archiveTransactionId"],
        where: { id: { in: expired.map((m) => m.id) } },
        _count: true,
      });
      expect(Math.max(...transactions.map((t) => t._count))).toBeLessThanOrEqual(100);
      expect(transactions.length).toBeGreaterThanOrEqual(5);
    } finally {
      await setChannelRetention("Rome", null);
    }
  });

  it("the archive is removed after ARCHIVED_DATA_VACUUMING_DELAY_DAYS, then the unclaimed upload's file", async () => {
    const url = await uploadFile(server, "hamlet", "old.txt");
    const pathId = url.slice("/user_uploads/".length);
    const stored = async () => (await uploadStorage(server.deps.config)).exists(pathId);
    expect(await stored()).toBe(true);
    const { id: m } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "vacuum",
      content: `[old](${url})`,
    });
    await expectSuccess(
      server.as("hamlet").DELETE("/messages/{message_id}", { params: { path: { message_id: m } } }),
    );
    const attachment = await server.db.attachment.findUniqueOrThrow({ where: { pathId } });
    // Old enough to go, but an archived message still links it.
    await server.db.attachment.update({
      where: { id: attachment.id },
      data: { createTime: new Date(Date.now() - 6 * 7 * DAY) },
    });
    const first = await loop().deliverDue();
    expect(first.filesDeleted).toBe(0);
    expect(await stored()).toBe(true);

    const { archiveTransactionId } = await server.db.archivedMessage.findUniqueOrThrow({
      where: { id: m },
    });
    await server.db.archiveTransaction.update({
      where: { id: archiveTransactionId },
      data: { timestamp: new Date(Date.now() - 31 * DAY) },
    });
    const second = await loop().deliverDue();
    expect(second.vacuumed).toBeGreaterThanOrEqual(1);
    expect(await server.db.archivedMessage.count({ where: { id: m } })).toBe(0);
    expect(second.filesDeleted).toBeGreaterThanOrEqual(1);
    expect(await server.db.attachment.count({ where: { id: attachment.id } })).toBe(0);
    expect(await server.db.archivedAttachment.count({ where: { id: attachment.id } })).toBe(0);
    expect(await stored()).toBe(false);
  });
});
