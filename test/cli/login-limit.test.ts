/**
 * The login limit (authenticate_by_username) is one count shared by every server process on a
 * PostgreSQL database: failures through either process add up, and parallel attempts through
 * both cannot take more than the limit. PostgreSQL only: the embedded database belongs to a
 * single process.
 */
import { describe, expect, it } from "vitest";
import { createZulipClient } from "../../client/src/index.ts";
import { expectError } from "../helpers/expect.ts";
import { useProcessPair, type ServerProcess } from "../helpers/processes.ts";
import { specCheckMiddleware } from "../helpers/spec-check.ts";

describe.skipIf(!process.env.DATABASE_URL)("login limit across server processes", () => {
  const pair = useProcessPair({ RATE_LIMITING: "true" });
  const attempt = (via: ServerProcess, username: string, password = "not the password") =>
    createZulipClient({ baseUrl: via.baseUrl, middleware: [specCheckMiddleware] }).POST(
      "/fetch_api_key",
      { body: { username, password } },
    );

  it("failures split across two processes reach the limit at five", async () => {
    const { a, b } = pair;
    const hamlet = pair.cluster.creds.users.hamlet!;
    for (const via of [a, b, a, b, a])
      await expectError(attempt(via, hamlet.email), 401, "Your username or password is incorrect");
    for (const via of [b, a])
      await expectError(
        attempt(via, hamlet.email, hamlet.password!),
        429,
        "API usage exceeded rate limit; see https://zulip.com/api/http-headers#rate-limiting-response-headers",
        { code: "RATE_LIMIT_HIT" },
      );
  });

  it("of ten attempts sent at once through both processes, five are checked and five refused", async () => {
    const { a, b } = pair;
    const othello = pair.cluster.creds.users.othello!.email;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => attempt(i % 2 ? a : b, othello)),
    );
    const statuses = answers.map((r) => r.response.status).sort();
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
  });
});
