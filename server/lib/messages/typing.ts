/** What typing notifications read (zerver/actions/typing.py check_send_typing_notification). */
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { isStorableId } from "../ids.ts";

export interface TypingUser {
  id: number;
  email: string;
  isActive: boolean;
}

/**
 * The users of a direct-message typing notification, in the order asked, in one statement:
 * every id must name a user of the organization, deactivated ones included (they are named in
 * the event's recipients but get no event), else "Invalid user ID <id>" for the first that
 * does not, as Zulip refuses the whole request.
 */
export async function typingRecipients(
  db: Db,
  realmId: number,
  userIds: number[],
): Promise<TypingUser[]> {
  const rows = await db.$queryRaw<TypingUser[]>`
    SELECT id, email, is_active AS "isActive" FROM user_profile
    WHERE realm_id = ${realmId}::int AND id = ANY (${userIds.filter(isStorableId)}::int[])`;
  const byId = new Map(rows.map((u) => [u.id, u]));
  return userIds.map((id) => {
    const user = byId.get(id);
    if (!user) throw new JsonableError(`Invalid user ID ${id}`);
    return user;
  });
}
