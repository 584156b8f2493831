/**
 * Deactivating and reactivating users and bots, and regenerating an API key
 * (zerver/actions/users.py do_deactivate_user, zerver/actions/create_user.py do_reactivate_user,
 * zerver/actions/user_settings.py do_regenerate_api_key). Each is one transaction whose
 * `user:<id>` keys make every process drop the cached user behind the API key at once.
 */
import type { Realm, UserProfile } from "../../db/index.ts";
import type { AppDeps } from "../../context.ts";
import { deleteUserQueues } from "../../events/queues.ts";
import { generateApiKey } from "../../lib/auth/passwords.ts";
import { activeUserIds } from "../../lib/users/users.ts";
import { addBotOwnerEvents } from "./bots.ts";
import { setSubscriptionsUserActive } from "../channels/subscriptions.ts";
import { notifyExportConsent } from "../realm/realm-export-changed.ts";
import { inTransaction } from "../transaction.ts";

type Deps = Pick<AppDeps, "db" | "events">;

/**
 * Deactivates the user and, for a human, their active bots (Zulip deactivates the bots first, so
 * their events come first). Their event queues are deleted; subscriptions and group memberships
 * stay (inactive users count in neither), and `realm_user` `update` `is_active: false` goes to
 * everyone still active.
 */
export async function doDeactivateUser(deps: Deps, realm: Realm, target: UserProfile) {
  await inTransaction(deps, realm.id, async ({ tx, events }) => {
    const rows = await tx.$queryRaw<{ id: number; is_bot: boolean }[]>`
      UPDATE user_profile SET is_active = false
      WHERE realm_id = ${realm.id} AND is_active
        AND (id = ${target.id} OR (${!target.isBot} AND is_bot AND bot_owner_id = ${target.id}))
      RETURNING id, is_bot`;
    // Already deactivated (by a concurrent request): nothing to tell.
    if (!rows.some((r) => r.id === target.id)) return;
    const ids = rows.map((r) => r.id);
    const ordered = [...ids.filter((id) => id !== target.id).sort((a, b) => a - b), target.id];
    await deleteUserQueues(tx, ids);
    await setSubscriptionsUserActive({ tx, events }, realm.id, ids, false);
    const everyone = await activeUserIds(tx, realm.id);
    // Bots too only through `realm_user` (no `realm_bot` `update` since feature level 474).
    for (const id of ordered)
      events.add(
        { type: "realm_user", op: "update", person: { user_id: id, is_active: false } },
        everyone,
      );
    // Group member lists leave inactive users out.
    events.invalidate(`groups:${realm.id}`);
  });
}

/**
 * Reactivates a user or bot: `realm_user` `update` `is_active: true` to everyone (a bot whose
 * owner is deactivated gets `actor` as its owner, with the owner-change events), `peer_add` for the channels it is still subscribed to and `user_group`
 * `add_members` for its named groups.
 */
export async function doReactivateUser(
  deps: Deps,
  realm: Realm,
  target: UserProfile,
  actor: UserProfile,
) {
  await inTransaction(deps, realm.id, async ({ tx, events }) => {
    const [row] = await tx.$queryRaw<{ owner_active: boolean | null }[]>`
      UPDATE user_profile u SET is_active = true WHERE u.id = ${target.id} AND NOT u.is_active
      RETURNING (SELECT o.is_active FROM user_profile o WHERE o.id = u.bot_owner_id) AS owner_active`;
    if (!row) return;
    const ownerChanged = target.isBot && target.botOwnerId !== null && row.owner_active === false;
    if (ownerChanged)
      await tx.userProfile.update({ where: { id: target.id }, data: { botOwnerId: actor.id } });
    const everyone = await activeUserIds(tx, realm.id);
    events.add(
      { type: "realm_user", op: "update", person: { user_id: target.id, is_active: true } },
      everyone,
    );
    if (ownerChanged)
      await addBotOwnerEvents({ tx, events }, realm.id, target.id, actor, target.botOwnerId);
    await setSubscriptionsUserActive({ tx, events }, realm.id, [target.id], true);
    if (!target.isBot) await notifyExportConsent({ tx, events }, realm.id, target);
    const groups = await tx.$queryRaw<{ id: number }[]>`
      SELECT m.user_group_id AS id FROM user_group_membership m JOIN named_user_group n ON n.id = m.user_group_id
      WHERE m.user_profile_id = ${target.id} ORDER BY m.user_group_id`;
    for (const group of groups)
      events.add(
        { type: "user_group", op: "add_members", group_id: group.id, user_ids: [target.id] },
        everyone,
      );
    events.invalidate(`groups:${realm.id}`);
  });
}

/**
 * A new API key for the user; the old one stops working in every process once this commits.
 * Since feature level 492 the user's E2EE push registrations go with it (the devices that
 * registered them did so with the old key): each device with one is removed, with `device`
 * `remove` to the user, in one statement.
 */
export async function doRegenerateApiKey(deps: Deps, realm: Realm, user: UserProfile) {
  const apiKey = generateApiKey();
  await inTransaction(deps, realm.id, async ({ tx, events }) => {
    await tx.userProfile.update({ where: { id: user.id }, data: { apiKey } });
    const removed = await tx.$queryRaw<{ id: number }[]>`
      DELETE FROM push_device WHERE user_profile_id = ${user.id}
        AND (push_key_id IS NOT NULL OR push_token_id IS NOT NULL OR pending_push_token_id IS NOT NULL)
      RETURNING id`;
    for (const { id } of removed.sort((a, b) => a.id - b.id))
      events.add({ type: "device", op: "remove", device_id: id }, [user.id]);
    // Drops the cached user under the old key (lib/auth/identity.ts keeps one key per user).
    events.invalidate(`user:${user.id}`);
  });
  return apiKey;
}
