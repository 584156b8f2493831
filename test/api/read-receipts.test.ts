/**
 * GET /messages/{message_id}/read_receipts (zerver/tests/test_read_receipts.py): the
 * organization's setting, the access rule, and who is left out (the sender, users without
 * send_read_receipts, deactivated users, muted and muting users); bots are listed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();
const userId = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;
const setEnabled = (enable_read_receipts: boolean) =>
  expectSuccess(server.as("iago").PATCH("/realm", { body: { enable_read_receipts } }));
const receipts = (as: string, messageId: number) =>
  server.as(as).GET("/messages/{message_id}/read_receipts", {
    params: { path: { message_id: messageId } },
  });
const markRead = (as: string, messages: number[]) =>
  expectSuccess(
    (server.creds.users[as]
      ? server.as(as)
      : server.client(server.creds.bots[as]!.email, server.creds.bots[as]!.api_key)
    ).POST("/messages/flags", { body: { op: "add", flag: "read", messages } }),
  );

beforeAll(() => setEnabled(true));
afterAll(() => setEnabled(false));

describe("GET /messages/{message_id}/read_receipts", () => {
  it("lists who read the message, not the sender, bots included", async () => {
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: {
          type: "private",
          to: JSON.stringify([
            userId("othello"),
            userId("cordelia"),
            userId("default-bot"),
            userId("iago"),
            userId("prospero"),
          ]),
          content: "who reads this?",
        },
      }),
    );
    expect((await expectSuccess(receipts("hamlet", id))).user_ids).toEqual([]);
    await markRead("othello", [id]);
    await markRead("default-bot", [id]);
    const both = [userId("othello"), userId("default-bot")].sort((a, b) => a - b);
    expect(await expectSuccess(receipts("cordelia", id))).toEqual({
      result: "success",
      msg: "",
      user_ids: both,
    });

    // A user who does not share read receipts is left out.
    await markRead("iago", [id]);
    await expectSuccess(
      server.as("iago").PATCH("/settings", { body: { send_read_receipts: false } }),
    );
    expect((await expectSuccess(receipts("hamlet", id))).user_ids).toEqual(both);
    await expectSuccess(
      server.as("iago").PATCH("/settings", { body: { send_read_receipts: true } }),
    );

    // Muted users, and users who muted the viewer, are left out for that viewer only.
    const mute = (as: string, other: string) =>
      server.as(as).POST("/users/me/muted_users/{muted_user_id}", {
        params: { path: { muted_user_id: userId(other) } },
      });
    await expectSuccess(mute("cordelia", "othello"));
    await expectSuccess(mute("default-bot", "hamlet"));
    try {
      expect((await expectSuccess(receipts("cordelia", id))).user_ids).toEqual(
        [userId("default-bot"), userId("iago")].sort((a, b) => a - b),
      );
      expect((await expectSuccess(receipts("hamlet", id))).user_ids).toEqual(
        [userId("othello"), userId("iago")].sort((a, b) => a - b),
      );
    } finally {
      const unmute = (as: string, other: string) =>
        server.as(as).DELETE("/users/me/muted_users/{muted_user_id}", {
          params: { path: { muted_user_id: userId(other) } },
        });
      await expectSuccess(unmute("cordelia", "othello"));
      await expectSuccess(unmute("default-bot", "hamlet"));
    }

    // Deactivated users are left out.
    await markRead("prospero", [id]);
    expect((await expectSuccess(receipts("hamlet", id))).user_ids).toContain(userId("prospero"));
    await expectSuccess(
      server
        .as("iago")
        .DELETE("/users/{user_id}", { params: { path: { user_id: userId("prospero") } } }),
    );
    expect((await expectSuccess(receipts("hamlet", id))).user_ids).not.toContain(
      userId("prospero"),
    );

    // One statement, the access rule included.
    const seen: { operationId: string; statements: number }[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      await expectSuccess(receipts("hamlet", id));
    } finally {
      server.deps.observe = undefined;
    }
    expect(
      seen.filter((i) => i.operationId === "get-read-receipts").map((i) => i.statements),
    ).toEqual([1]);

    // Marking unread takes the receipt back.
    await expectSuccess(
      server
        .as("othello")
        .POST("/messages/flags", { body: { op: "remove", flag: "read", messages: [id] } }),
    );
    expect((await expectSuccess(receipts("hamlet", id))).user_ids).not.toContain(userId("othello"));
  });

  it("refuses messages the caller may not read, before the organization's setting", async () => {
    const { id } = await expectSuccess(
      server.as("iago").POST("/messages", {
        body: { type: "stream", to: "core team", topic: "secret", content: "hidden" },
      }),
    );
    await expectError(receipts("hamlet", id), 400, "Invalid message(s)");
    await expectError(receipts("hamlet", 999999), 400, "Invalid message(s)");
    await setEnabled(false);
    try {
      await expectError(receipts("hamlet", id), 400, "Invalid message(s)");
      await expectError(
        receipts("iago", id),
        400,
        "Read receipts are disabled in this organization.",
      );
    } finally {
      await setEnabled(true);
    }
    // A public channel's message is readable without a subscription.
    const { id: open } = await expectSuccess(
      server.as("iago").POST("/messages", {
        body: { type: "stream", to: "Venice", topic: "open", content: "for all" },
      }),
    );
    await markRead("othello", [open]);
    expect((await expectSuccess(receipts("hamlet", open))).user_ids).toEqual([userId("othello")]);
  });
});
