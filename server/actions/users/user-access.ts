/**
 * `realm_user` add and remove as a restricted guest gains or loses access to a user (Zulip's
 * send_user_creation_events_on_adding_subscriptions and
 * send_user_remove_events_on_removing_subscriptions): in an organization whose
 * can_access_all_users_group leaves guests out, a guest who comes to share a channel with someone
 * learns of them as if they had just joined, and one who no longer shares anything with them sees
 * them leave as "Unknown user". The difference is taken by the one access rule
 * (lib/access/users.ts) before and after the change, inside its transaction.
 */
import type { Realm, Tx } from "../../db/index.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { guestAccessAmong, INACCESSIBLE_USER_NAME } from "../../lib/access/users.ts";
import { profileDataOf, realmUsers, Role, toApiUser } from "../../lib/users/users.ts";

type AccessRealm = Pick<Realm, "id" | "canAccessAllUsersGroupId">;

/**
 * Call before a change to the subscriptions of `recipientIds` (the users `userIds` joining or
 * leaving them); the function it returns, called after the change in the same unit of work, adds
 * the events. One statement before and one after; the events' user dicts in one more.
 */
export async function watchUserAccess(
  { tx }: UnitOfWork,
  realm: AccessRealm,
  userIds: number[],
  recipientIds: number[],
): Promise<(unit: UnitOfWork) => Promise<void>> {
  const before = await guestAccessAmong(tx, realm, userIds, recipientIds);
  return async ({ tx, events }) => {
    const after = await guestAccessAmong(tx, realm, userIds, recipientIds);
    const gained = new Map<number, number[]>();
    const lost = new Map<number, number[]>();
    for (const viewer of new Set([...before.keys(), ...after.keys()])) {
      const was = before.get(viewer) ?? new Set();
      const is = after.get(viewer) ?? new Set();
      const g = [...is].filter((id) => !was.has(id));
      const l = [...was].filter((id) => !is.has(id));
      if (g.length + l.length === 0) continue;
      if (g.length) gained.set(viewer, g);
      if (l.length) lost.set(viewer, l);
    }
    for (const [viewer, ids] of lost)
      for (const id of ids.sort((a, b) => a - b))
        events.add(
          {
            type: "realm_user",
            op: "remove",
            person: { user_id: id, full_name: INACCESSIBLE_USER_NAME },
          },
          [viewer],
        );
    await addEvents(tx, events, realm.id, gained);
  };
}

/** `realm_user` add with each gained user's dict, as the guest would have got it at creation. */
async function addEvents(
  tx: Tx,
  events: UnitOfWork["events"],
  realmId: number,
  gained: Map<number, number[]>,
) {
  const ids = [...new Set([...gained.values()].flat())];
  if (ids.length === 0) return;
  const users = await realmUsers(tx, realmId, { ids, profileData: true });
  const profileData = profileDataOf(users);
  const byId = new Map(users.map((u) => [u.id, u]));
  for (const [viewer, targets] of gained)
    for (const id of targets.sort((a, b) => a - b)) {
      const user = byId.get(id);
      if (!user) continue;
      const person = toApiUser(
        user,
        { id: viewer, role: Role.GUEST },
        {
          clientGravatar: false,
          profileData,
        },
      );
      events.add({ type: "realm_user", op: "add", person }, [viewer]);
    }
}
