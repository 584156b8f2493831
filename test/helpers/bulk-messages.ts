/**
 * Many channel messages at once, for tests of long histories: one real message is sent through
 * the API (so its recipient, client and every recipient's flags are the server's own), then
 * copied `count` times in one SQL statement, as `populate-scale` fills its organizations.
 * Sending 1,200 messages one by one takes ~15 s on the embedded database; this takes well under 1 s.
 */
import { expect } from "vitest";
import { invalidateCaches } from "../../server/lib/caches.ts";
import { expectSuccess } from "./expect.ts";
import type { TestServer } from "./server.ts";

/**
 * Sends `prefix 0` as `sender` to the topic, then copies it as `prefix 1` … `prefix count-1`;
 * every copy has the flags the first one has for each recipient (mark it read before, through
 * `beforeCopy`, to have read copies). Returns the ids, oldest first.
 */
export async function bulkChannelMessages(
  server: TestServer,
  options: {
    sender: string;
    streamId: number;
    topic: string;
    count: number;
    prefix: string;
    beforeCopy?: (firstId: number) => Promise<void>;
  },
): Promise<number[]> {
  const { id } = await expectSuccess(
    server.as(options.sender).POST("/messages", {
      body: {
        type: "stream",
        to: options.streamId,
        topic: options.topic,
        content: `${options.prefix} 0`,
      },
    }),
  );
  await options.beforeCopy?.(id);
  const rows = await server.db.$queryRawUnsafe<{ id: number }[]>(
    `WITH copies AS (
       INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content,
                            rendered_content_version, date_sent, sending_client_id, type, is_channel_message)
       SELECT m.realm_id, m.sender_id, m.recipient_id, m.subject, $2 || ' ' || g, '<p>' || $2 || ' ' || g || '</p>',
              m.rendered_content_version, m.date_sent, m.sending_client_id, m.type, m.is_channel_message
       FROM message m, generate_series(1, $3::int - 1) AS g WHERE m.id = $1::int ORDER BY g
       RETURNING id),
     flags AS (
       INSERT INTO user_message (user_profile_id, message_id, flags)
       SELECT um.user_profile_id, c.id, um.flags FROM user_message um, copies c WHERE um.message_id = $1::int)
     SELECT id FROM copies ORDER BY id`,
    id,
    options.prefix,
    options.count,
  );
  invalidateCaches(["*"]);
  expect(rows).toHaveLength(options.count - 1);
  return [id, ...rows.map((r) => Number(r.id))];
}
