/** The organization's default channels (zerver/lib/default_streams.py). */
import type { Db } from "../../db/index.ts";

/**
 * get_default_stream_ids_for_realm: register's `realm_default_streams` and the `default_streams`
 * event, as channel IDs since feature level 330. Archived channels are never default (archiving
 * clears the row).
 */
export async function defaultChannelIds(db: Db, realmId: number): Promise<number[]> {
  const rows = await db.defaultStream.findMany({
    where: { realmId },
    select: { streamId: true },
    orderBy: { streamId: "asc" },
  });
  return rows.map((r) => r.streamId);
}
