/** An event queue registered through the typed client, read without blocking. */
import type { TestServer } from "./server.ts";
import { openQueue } from "./builders.ts";

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
  const queue = await openQueue(server.as(as), {
    event_types: types,
    client_capabilities: capabilities,
  });
  return async () => (await queue.allEvents()).map(({ id: _id, ...event }) => event);
}
