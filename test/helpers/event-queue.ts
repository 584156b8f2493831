/** An event queue registered through the typed client, read without blocking. */
import type { TestServer } from "./server.ts";
import { expectSuccess } from "./expect.ts";

/**
 * Registers a queue for `as` that receives `types`, and returns a function reading every event
 * it got so far (without their ids).
 */
export async function queueOf(
  server: TestServer,
  as: string,
  types: string[],
  capabilities: Record<string, boolean> = {},
) {
  const { queue_id } = await expectSuccess(
    server.as(as).POST("/register", {
      body: { event_types: types, client_capabilities: capabilities } as never,
    }),
  );
  return async () =>
    (
      await expectSuccess(
        server.as(as).GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events.map(({ id: _id, ...event }) => event);
}
