/**
 * Changes to users made through one server process take effect at once in another on the same
 * PostgreSQL database: the cached user behind an API key, the cached group memberships behind
 * permissions, register's state, and event queues served by the other process. PostgreSQL only:
 * the embedded database belongs to a single process.
 */
import { describe, expect, it } from "vitest";
import { createZulipClient } from "../../client/src/index.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { sleep, useProcessPair, type ServerProcess } from "../helpers/processes.ts";
import { specCheckMiddleware } from "../helpers/spec-check.ts";
import { type Body } from "../helpers/builders.ts";

/** Long enough that a long-poll answered by the heartbeat cannot pass for a woken one. */
const HEARTBEAT_MS = 30_000;
describe.skipIf(!process.env.DATABASE_URL)("user changes across server processes", () => {
  const pair = useProcessPair({ EVENT_HEARTBEAT_MS: String(HEARTBEAT_MS) });
  const id = (name: string) => pair.cluster.creds.users[name]!.user_id;
  const patchUser = (
    via: ServerProcess,
    as: string,
    name: string,
    body: Body<"/users/{user_id}", "patch">,
  ) =>
    via.as(as).PATCH("/users/{user_id}", {
      params: { path: { user_id: id(name) } },
      body: body,
    });

  it("a role change through one process: the other refuses the demoted administrator, its queues hear of it, and register follows", async () => {
    const { a, b } = pair;
    // B knows iago as an administrator: his user row and group memberships are cached there.
    const { group_id } = await expectSuccess(
      b.as("hamlet").POST("/user_groups/create", {
        body: { name: "players", description: "", members: [id("hamlet")] },
      }),
    );
    const editGroup = (description: string) =>
      b.as("iago").PATCH("/user_groups/{user_group_id}", {
        params: { path: { user_group_id: group_id } },
        body: { description },
      });
    await expectSuccess(editGroup("as an administrator"));
    await expectSuccess(patchUser(b, "iago", "othello", { full_name: "Othello" }));

    // A long-poll waiting in B for an event committed through A.
    const { queue_id } = await expectSuccess(
      b.as("hamlet").POST("/register", { body: { event_types: ["realm_user"] } }),
    );
    const waiting = b.as("hamlet").GET("/events", {
      params: { query: { queue_id: queue_id!, last_event_id: -1 } },
    });
    await sleep(300);
    const started = Date.now();
    await expectSuccess(patchUser(a, "desdemona", "iago", { role: 400 }));

    const woken = await expectSuccess(waiting);
    expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS / 2);
    expect(woken.events).toEqual([
      expect.objectContaining({
        type: "realm_user",
        op: "update",
        person: { user_id: id("iago"), role: 400 },
      }),
    ]);

    // B dropped its cached entries when it read the log row that woke the long-poll, so from
    // now on it refuses: the permission that rests on the cached user (administering users)…
    await expectError(
      patchUser(b, "iago", "othello", { full_name: "Othello, the Moor" }),
      400,
      "Insufficient permission",
    );
    // …and the one that rests on cached group membership (can_manage_all_groups).
    await expectError(editGroup("as a member"), 400, "Insufficient permission");

    const state = await expectSuccess(
      b.as("hamlet").POST("/register", { body: { fetch_event_types: ["realm_user"] } }),
    );
    expect((state as any).realm_users.find((u: any) => u.user_id === id("iago"))).toMatchObject({
      role: 400,
      is_admin: false,
    });

    // And back: promoted through A, iago administers through B again once B has the event.
    const next = b.as("hamlet").GET("/events", {
      params: { query: { queue_id: queue_id!, last_event_id: woken.events[0]!.id } },
    });
    await expectSuccess(patchUser(a, "desdemona", "iago", { role: 200 }));
    expect((await expectSuccess(next)).events).toEqual([
      expect.objectContaining({ person: { user_id: id("iago"), role: 200 } }),
    ]);
    await expectSuccess(editGroup("an administrator again"));
  });
  it("a deactivation and a new API key through one process: the other refuses the old keys at once and closes the user's queues", async () => {
    const { a, b } = pair;
    // B has othello and cordelia cached behind their keys, and othello has a queue there.
    await expectSuccess(b.as("othello").GET("/users/me"));
    await expectSuccess(b.as("cordelia").GET("/users/me"));
    const own = await expectSuccess(
      b.as("othello").POST("/register", { body: { event_types: ["message"] } }),
    );
    const othellosPoll = b.as("othello").GET("/events", {
      params: { query: { queue_id: own.queue_id!, last_event_id: -1 } },
    });
    const { queue_id } = await expectSuccess(
      b.as("hamlet").POST("/register", { body: { event_types: ["realm_user"] } }),
    );
    const waiting = b.as("hamlet").GET("/events", {
      params: { query: { queue_id: queue_id!, last_event_id: -1 } },
    });
    await sleep(300);

    // Through A: cordelia takes a new key, then desdemona deactivates othello.
    const { api_key } = await expectSuccess(a.as("cordelia").POST("/users/me/api_key/regenerate"));
    await expectSuccess(
      a
        .as("desdemona")
        .DELETE("/users/{user_id}", { params: { path: { user_id: id("othello") } } }),
    );

    // Othello's poll waiting in B ends: his queue is gone.
    await expectError(othellosPoll, 400, `Bad event queue ID: ${own.queue_id}`, {
      code: "BAD_EVENT_QUEUE_ID",
    });
    const woken = await expectSuccess(waiting);
    expect(woken.events).toEqual([
      expect.objectContaining({
        type: "realm_user",
        op: "update",
        person: { user_id: id("othello"), is_active: false },
      }),
    ]);
    // B has read the log up to the deactivation, the key change before it included: no retry.
    await expectError(b.as("othello").GET("/users/me"), 401, "Account is deactivated");
    await expectError(b.as("cordelia").GET("/users/me"), 401, "Invalid API key");
    const renewed = createZulipClient({
      baseUrl: b.baseUrl,
      email: pair.cluster.creds.users.cordelia!.email,
      apiKey: api_key,
      middleware: [specCheckMiddleware],
    });
    expect((await expectSuccess(renewed.GET("/users/me"))).user_id).toBe(id("cordelia"));

    // Reactivated through A, othello is let in by B again once B has the event.
    const next = b.as("hamlet").GET("/events", {
      params: { query: { queue_id: queue_id!, last_event_id: woken.events[0]!.id } },
    });
    await expectSuccess(
      a.as("desdemona").POST("/users/{user_id}/reactivate", {
        params: { path: { user_id: id("othello") } },
      }),
    );
    expect((await expectSuccess(next)).events).toEqual([
      expect.objectContaining({ person: { user_id: id("othello"), is_active: true } }),
    ]);
    await expectSuccess(b.as("othello").GET("/users/me"));
  });
});
