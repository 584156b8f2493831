/**
 * Web sessions across server processes on one PostgreSQL database: a session made by logging in
 * through one process works on another, and a logout through either is refused by the other at
 * once (sessions are read from the database on every request, never cached per process).
 */
import { describe, expect, it } from "vitest";
import { CookieJar } from "../helpers/browser-session.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useProcessPair } from "../helpers/processes.ts";

describe.skipIf(!process.env.DATABASE_URL)("web sessions on two processes", () => {
  const pair = useProcessPair();

  it("logs in on A, works on B, logs out on B, refused on A at once", async () => {
    const hamlet = pair.cluster.creds.users.hamlet!;
    const onA = new CookieJar(pair.a.baseUrl);
    expect((await onA.login(hamlet.email, hamlet.password!)).status).toBe(302);
    const csrf = await onA.csrfToken();
    const onB = new CookieJar(pair.b.baseUrl);
    onB.cookies.set("sessionid", onA.cookies.get("sessionid")!);
    // A's session on B, for a read and a write (its CSRF token too).
    const me = await expectSuccess(onB.client(csrf).GET("/users/me"));
    expect(me.user_id).toBe(hamlet.user_id);
    await expectSuccess(
      onB.client(csrf).POST("/messages", {
        body: { type: "stream", to: "Denmark", topic: "processes", content: "via B" },
      }),
    );
    await expectSuccess(onA.client(csrf).GET("/users/me"));
    const out = await onB.fetch("/accounts/logout/", {
      method: "POST",
      headers: { "X-CSRFToken": csrf },
    });
    expect(out.status).toBe(302);
    await expectError(
      onA.client(csrf).GET("/users/me"),
      401,
      "Not logged in: API authentication or user session required",
    );
    expect((await onA.fetch("/")).status).toBe(302);
  });
});
