/**
 * The API rate limit is one count shared by every server process on a PostgreSQL database: each
 * process takes slices of a window's allowance (leases) and serves them from memory, so requests
 * hammered through two processes at once get at least 90% of the limit and never more.
 * PostgreSQL only: the embedded database belongs to a single process.
 */
import { describe, expect, it } from "vitest";
import { useProcessPair } from "../helpers/processes.ts";

const LIMIT = 60;
// Ten minutes, so that a slow machine cannot see the window end (and a new one begin) mid-test.
const WINDOW = 600;

describe.skipIf(!process.env.DATABASE_URL)("API rate limit across server processes", () => {
  const pair = useProcessPair({
    RATE_LIMITING: "true",
    RATE_LIMITING_RULES: JSON.stringify({ api_by_user: [[WINDOW, LIMIT]] }),
  });

  it(`of requests hammered through both processes at once, between 90% and 100% of ${LIMIT} are served`, async () => {
    const { a, b } = pair;
    const clients = [a.as("hamlet"), b.as("hamlet")];
    const statuses: number[] = [];
    const retryAfter: string[] = [];
    // 8 requests in flight through each process, until each has been refused 10 times: the
    // allowance is exhausted everywhere, and every slice a process held has been spent.
    await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const client = clients[i % 2]!;
        let refused = 0;
        while (refused < 10) {
          const { response } = await client.GET("/users/me");
          statuses.push(response.status);
          if (response.status === 429) {
            refused++;
            retryAfter.push(response.headers.get("Retry-After")!);
          }
        }
      }),
    );
    const served = statuses.filter((s) => s === 200).length;
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(served).toBeLessThanOrEqual(LIMIT);
    expect(served).toBeGreaterThanOrEqual(Math.ceil(LIMIT * 0.9));
    if (process.env.SHOW_RATE_LIMITS) console.log(`served ${served} of ${statuses.length}`);
    // Refused until the window that began with the first request ends.
    for (const seconds of retryAfter) {
      expect(Number(seconds)).toBeGreaterThan(WINDOW - 120);
      expect(Number(seconds)).toBeLessThanOrEqual(WINDOW);
    }
    // Another user has an allowance of their own, through either process.
    for (const via of [a, b]) {
      const { response } = await via.as("othello").GET("/users/me");
      expect(response.status).toBe(200);
    }
  });
});
