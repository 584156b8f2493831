/**
 * Bots (zerver/views/users.py add_bot_backend, get_bots_backend, patch_bot_backend,
 * deactivate_bot_backend), with Zulip's checks in Zulip's order.
 */
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import type { RequestContext } from "../context.ts";
import {
  accessBotById,
  botAvatarUrl,
  botEmail,
  BotType,
  checkBotNameAvailable,
  checkCanCreateBot,
  checkNewBotOwner,
  ownActiveBots,
  type BotRow,
} from "../lib/users/bots.ts";
import { accessChannel } from "../lib/channels/channels.ts";
import { fakeEmailDomain } from "../lib/realm/realm.ts";
import {
  checkFullNameInRealm,
  checkRoleChange,
  findUserByDeliveryEmail,
  requireMemberOrAdmin,
} from "../lib/users/users.ts";
import { doCreateBot, doUpdateBot, type BotChanges } from "../actions/users/bots.ts";
import { doDeactivateUser } from "../actions/users/user-deactivation.ts";

/** A default channel by name, as access_stream_by_name finds it; "" means none where allowed. */
async function defaultChannel(ctx: RequestContext, name: string) {
  const { id, name: found } = await accessChannel(ctx.db, ctx.user, { name });
  return { id, name: found };
}

const botSettings = (b: BotRow) => ({
  avatar_url: botAvatarUrl(b),
  default_sending_stream: b.defaultSendingStream,
  default_events_register_stream: b.defaultEventsRegisterStream,
  default_all_public_streams: b.defaultAllStreams,
});

/** POST /bots. */
export const createBot: Handler<"create-bot"> = async ({ body }, ctx) => {
  requireMemberOrAdmin(ctx.user);
  const shortName = body.short_name.trim();
  if (shortName === "") throw new JsonableError("Bad name or username");
  // check_full_name with the organization: require_unique_names holds for bots too.
  const fullName = await checkFullNameInRealm(ctx.db, ctx.realm, body.full_name, null);
  const botType = body.bot_type ?? BotType.GENERIC;
  const email = botEmail(shortName, await fakeEmailDomain(ctx.db, ctx.realm, ctx.config));
  if (botType === BotType.EMBEDDED) throw new JsonableError("Embedded bots are not enabled.");
  if (email === null) throw new JsonableError("Bad name or username");
  if (await findUserByDeliveryEmail(ctx.db, ctx.realm.id, email))
    throw new JsonableError("Username already in use");
  await checkBotNameAvailable(ctx.db, ctx.realm.id, fullName, false);
  await checkCanCreateBot(ctx.db, ctx.user, ctx.realm, botType);
  // Outgoing webhook bots (3) need webhook delivery, which this server does not have.
  if (botType !== BotType.GENERIC && botType !== BotType.INCOMING_WEBHOOK)
    throw new JsonableError("Invalid bot type");
  const sendingStream =
    body.default_sending_stream === undefined
      ? null
      : await defaultChannel(ctx, body.default_sending_stream);
  const registerStream =
    body.default_events_register_stream === undefined
      ? null
      : await defaultChannel(ctx, body.default_events_register_stream);
  const bot = await doCreateBot(ctx, ctx.realm, ctx.user, {
    email,
    fullName,
    botType,
    sendingStream,
    registerStream,
    allPublicStreams: body.default_all_public_streams ?? false,
  });
  return { user_id: bot.id, api_key: bot.apiKey, ...botSettings(bot) };
};

/** GET /bots. */
export const getBots: Handler<"get-bots"> = async (_input, ctx) => {
  requireMemberOrAdmin(ctx.user);
  const bots = await ownActiveBots(ctx.db, ctx.user.id);
  return {
    bots: bots.map((b) => ({
      username: b.email,
      full_name: b.fullName,
      api_key: b.apiKey,
      ...botSettings(b),
    })),
  };
};

/** PATCH /bots/{bot_id}. */
export const updateBot: Handler<"update-bot"> = async ({ path, body }, ctx) => {
  requireMemberOrAdmin(ctx.user);
  const bot = await accessBotById(ctx.db, ctx.user, path.bot_id);
  const changes: BotChanges = {};
  if (body.full_name !== undefined) {
    // check_change_bot_full_name: the bot's own name again changes nothing.
    const fullName = await checkFullNameInRealm(ctx.db, ctx.realm, body.full_name, bot.id);
    if (fullName !== bot.fullName) {
      await checkBotNameAvailable(ctx.db, ctx.realm.id, fullName, false);
      changes.fullName = fullName;
    }
  }
  if (body.short_name !== undefined) {
    // Feature level 447: the address as add_bot_backend builds it; the bot's own again changes nothing.
    const shortName = body.short_name.trim();
    const domain = await fakeEmailDomain(ctx.db, ctx.realm, ctx.config);
    const email = shortName === "" ? null : botEmail(shortName, domain);
    if (email === null) throw new JsonableError("Bad name or username");
    if (email.toLowerCase() !== bot.deliveryEmail.toLowerCase()) {
      if (await findUserByDeliveryEmail(ctx.db, ctx.realm.id, email))
        throw new JsonableError("Username already in use");
      changes.email = { email, domain };
    }
  }
  if (body.role !== undefined && body.role !== bot.role) {
    checkRoleChange(ctx.user, bot.role, body.role);
    changes.role = body.role;
  }
  if (body.bot_owner_id !== undefined) {
    changes.owner = await checkNewBotOwner(ctx.db, ctx.realm.id, body.bot_owner_id);
  }
  if (body.default_sending_stream !== undefined)
    changes.sendingStream =
      body.default_sending_stream === ""
        ? null
        : await defaultChannel(ctx, body.default_sending_stream);
  if (body.default_events_register_stream !== undefined)
    changes.registerStream =
      body.default_events_register_stream === ""
        ? null
        : await defaultChannel(ctx, body.default_events_register_stream);
  if (body.default_all_public_streams !== undefined)
    changes.allPublicStreams = body.default_all_public_streams;
  const updated = await doUpdateBot(ctx, ctx.realm, bot, changes);
  return {
    full_name: updated.fullName,
    ...botSettings(updated),
    // Legacy bots have no owner, and no `bot_owner`.
    ...(updated.ownerEmail !== null ? { bot_owner: updated.ownerEmail } : {}),
  };
};

/** DELETE /bots/{bot_id}. */
export const deactivateBot: Handler<"deactivate-bot"> = async ({ path }, ctx) => {
  const bot = await accessBotById(ctx.db, ctx.user, path.bot_id);
  await doDeactivateUser(ctx, ctx.realm, bot);
  return {};
};

/** GET /bots/{bot_id}/api_key (get_bot_api_key_backend, feature level 463): access_bot_by_id's checks. */
export const getBotApiKey: Handler<"get-bot-api-key"> = async ({ path }, ctx) => {
  const bot = await accessBotById(ctx.db, ctx.user, path.bot_id);
  return { api_key: bot.apiKey };
};
