/** Muted users (zerver/lib/muted_users.py): whom a user muted, and when. */
import type { Db } from "../../db/index.ts";
import { unixSeconds } from "../time.ts";

/** get_user_mutes: `{id, timestamp}` of each user the user muted, in the order they were muted. */
export async function mutedUsers(db: Db, userId: number) {
  const rows = await db.mutedUser.findMany({
    where: { userProfileId: userId },
    orderBy: { id: "asc" },
    select: { mutedUserId: true, dateMuted: true },
  });
  return rows.map((r) => ({ id: r.mutedUserId, timestamp: unixSeconds(r.dateMuted) }));
}
