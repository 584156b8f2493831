/**
 * Creating and changing bots (zerver/views/users.py add_bot_backend and patch_bot_backend,
 * zerver/actions/bots.py, zerver/actions/create_user.py notify_created_bot): one transaction
 * each, with the `realm_bot` events for those who administer the bot.
 */
import type { Realm, UserProfile } from "../../db/index.ts";
import type { AppDeps } from "../../context.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { botDict, botOwnerUserIds, botRow, type BotRow } from "../../lib/users/bots.ts";
import { fakeEmailDomain } from "../../lib/realm/realm.ts";
import { activeUserIds, isRealmAdmin, Role, activeViewers } from "../../lib/users/users.ts";
import { inTransaction } from "../transaction.ts";
import { changeDeliveryEmail, changeUserRole, doCreateUser } from "./users.ts";

type Deps = Pick<AppDeps, "db" | "events" | "config">;
type Channel = { id: number; name: string } | null;

export interface NewBot {
  email: string;
  fullName: string;
  botType: number;
  sendingStream: Channel;
  registerStream: Channel;
  allPublicStreams: boolean;
}

/** A bot owned by `owner`: the user (with its `realm_user` `add`), then `realm_bot` `add` (notify_created_bot). */
export async function doCreateBot(
  deps: Deps,
  realm: Realm,
  owner: UserProfile,
  input: NewBot,
): Promise<BotRow> {
  const domain = await fakeEmailDomain(deps.db, realm, deps.config);
  return inTransaction(deps, realm.id, async ({ tx, events }) => {
    const user = await doCreateUser(
      tx,
      realm,
      {
        email: input.email,
        fullName: input.fullName,
        role: Role.MEMBER,
        isBot: true,
        botType: input.botType,
        botOwnerId: owner.id,
      },
      domain,
      events,
    );
    if (input.sendingStream || input.registerStream || input.allPublicStreams)
      await tx.userProfile.update({
        where: { id: user.id },
        data: {
          defaultSendingStreamId: input.sendingStream?.id ?? null,
          defaultEventsRegisterStreamId: input.registerStream?.id ?? null,
          defaultAllStreams: input.allPublicStreams,
        },
      });
    const bot = await botRow(tx, user.id);
    const audience = await botOwnerUserIds(tx, realm.id, [bot.id]);
    events.add({ type: "realm_bot", op: "add", bot: botDict(bot) }, audience.get(bot.id)!);
    return bot;
  });
}

/**
 * send_bot_owner_update_events: the previous owner loses the bot (`realm_bot` `delete`) and the new
 * one gains it (`add`), unless they are administrators, who see every bot; everyone gets
 * `realm_user` `update` with `bot_owner_id` (no `realm_bot` `update` with `owner_id` since
 * feature level 474). Uses `tx` only.
 */
export async function addBotOwnerEvents(
  { tx, events }: UnitOfWork,
  realmId: number,
  botId: number,
  newOwner: Pick<UserProfile, "id" | "role">,
  previousOwnerId: number | null,
) {
  const previous =
    previousOwnerId === null
      ? null
      : await tx.userProfile.findUnique({
          where: { id: previousOwnerId },
          select: { id: true, role: true },
        });
  if (previous && !isRealmAdmin(previous)) {
    events.add({ type: "realm_bot", op: "delete", bot: { user_id: botId } }, [previous.id]);
  }
  if (!isRealmAdmin(newOwner))
    events.add({ type: "realm_bot", op: "add", bot: botDict(await botRow(tx, botId)) }, [
      newOwner.id,
    ]);
  events.add(
    { type: "realm_user", op: "update", person: { user_id: botId, bot_owner_id: newOwner.id } },
    await activeUserIds(tx, realmId),
  );
}

export interface BotChanges {
  fullName?: string;
  /** A new address from `short_name` (feature level 447), checked free; `domain` the bots' domain. */
  email?: { email: string; domain: string };
  /** A new role, its permission already checked (checkRoleChange). */
  role?: number;
  owner?: UserProfile;
  /** undefined: unchanged; null: none. */
  sendingStream?: Channel;
  registerStream?: Channel;
  allPublicStreams?: boolean;
}

/**
 * PATCH /bots/{bot_id} once its checks passed: every change in one transaction, each with its
 * events in Zulip's order (name, address, role, owner, default channels, all public channels).
 */
export async function doUpdateBot(
  deps: Pick<AppDeps, "db" | "events">,
  realm: Realm,
  bot: UserProfile,
  changes: BotChanges,
): Promise<BotRow> {
  return inTransaction(deps, realm.id, async ({ tx, events }) => {
    const fullName = changes.fullName !== bot.fullName ? changes.fullName : undefined;
    const owner = changes.owner && changes.owner.id !== bot.botOwnerId ? changes.owner : undefined;
    await tx.userProfile.update({
      where: { id: bot.id },
      data: {
        fullName,
        botOwnerId: owner?.id,
        defaultSendingStreamId:
          changes.sendingStream === undefined ? undefined : (changes.sendingStream?.id ?? null),
        defaultEventsRegisterStreamId:
          changes.registerStream === undefined ? undefined : (changes.registerStream?.id ?? null),
        defaultAllStreams: changes.allPublicStreams,
      },
    });
    events.invalidate(`user:${bot.id}`);
    const audience = async () => (await botOwnerUserIds(tx, realm.id, [bot.id])).get(bot.id)!;
    const update = async (fields: Record<string, unknown>) =>
      events.add(
        { type: "realm_bot", op: "update", bot: { user_id: bot.id, ...fields } },
        await audience(),
      );
    // A new name: `realm_user` only (no `realm_bot` `update` since feature level 474).
    if (fullName !== undefined)
      events.add(
        { type: "realm_user", op: "update", person: { user_id: bot.id, full_name: fullName } },
        await activeUserIds(tx, realm.id),
      );
    // A new address (short_name): as an administrator's change of a user's address
    // (`realm_user` `update` with `delivery_email`, the Gravatar and `new_email`).
    if (changes.email)
      await changeDeliveryEmail(
        { tx, events },
        realm,
        bot,
        changes.email.email,
        changes.email.domain,
        await activeViewers(tx, realm.id),
      );
    // Zulip's order: the name, then the role (do_change_user_role, as for users), then the owner.
    if (changes.role !== undefined && changes.role !== bot.role) {
      await changeUserRole(
        { tx, events },
        realm,
        bot,
        changes.role,
        await activeViewers(tx, realm.id),
      );
    }
    if (owner) await addBotOwnerEvents({ tx, events }, realm.id, bot.id, owner, bot.botOwnerId);
    if (changes.sendingStream !== undefined)
      await update({ default_sending_stream: changes.sendingStream?.name ?? null });
    if (changes.registerStream !== undefined)
      await update({ default_events_register_stream: changes.registerStream?.name ?? null });
    if (changes.allPublicStreams !== undefined)
      await update({ default_all_public_streams: changes.allPublicStreams });
    return botRow(tx, bot.id);
  });
}
