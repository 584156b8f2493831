/**
 * Creating an organization: the realm row, its system groups (Zulip's role:* groups nested
 * owners ⊂ administrators ⊂ moderators ⊂ fullmembers ⊂ members ⊂ everyone ⊂ internet, and
 * role:nobody) and the realm's permission settings pointing at them, in one transaction;
 * doCreateOrganization adds what a new organization starts with (owner, channels, bot).
 * Changing its settings afterwards: doUpdateRealm (zerver/actions/realm_settings.py).
 */
import { randomUUID } from "node:crypto";
import type { AppDeps, RequestContext } from "../../context.ts";
import { Prisma, type Tx } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import {
  OFFERED_REALM_SETTINGS,
  REALM_GROUP_SETTINGS,
  settingChangeEvent,
  settingColumn,
  SYSTEM_GROUP_NESTING,
  SystemGroups,
  USER_GROUP_SETTINGS,
  type DefaultGroup,
  type GroupSetting,
  type SystemGroupName,
} from "../../lib/groups/group-settings.ts";
import { renderMarkdown } from "../../lib/markdown/index.ts";
import {
  checkGroupSettingUpdate,
  deleteAnonymousGroups,
  type GroupSettingValue,
} from "../../lib/groups/user-groups.ts";
import {
  fakeEmailDomain,
  GIF_RATING_POLICY_OPTIONS,
  realmUrl,
  SUBDOMAIN_IN_USE,
} from "../../lib/realm/realm.ts";
import { availableVideoChatProviders } from "../../lib/realm/video-calls.ts";
import { can } from "../../lib/groups/permissions.ts";
import { activeUserIds, EmailVisibility, Role } from "../../lib/users/users.ts";
import type { ZulipEvent } from "../../events/index.ts";
import { doCreateChannel } from "../channels/channels.ts";
import { INTERNAL_BOTS } from "../../lib/users/internal-bots.ts";
import { doSubscribe } from "../channels/subscriptions.ts";
import { inTransaction } from "../transaction.ts";
import { doCreateUser, type NewUser } from "../users/users.ts";

const DESCRIPTIONS: Record<SystemGroupName, string> = {
  "role:owners": "Owners of this organization",
  "role:administrators": "Administrators of this organization, including owners",
  "role:moderators": "Moderators of this organization, including administrators",
  "role:fullmembers": "Members of this organization, not including new accounts and guests",
  "role:members": "Members of this organization, not including guests",
  "role:everyone": "Everyone in this organization, including guests",
  "role:internet": "Everyone on the Internet",
  "role:nobody": "Nobody",
};

export interface NewRealm {
  name: string;
  stringId: string;
  description?: string;
  emailAddressVisibility?: number;
}

/** A default that is a system group (creator defaults exist only for channels and user groups). */
function systemDefault(setting: GroupSetting, name: DefaultGroup): SystemGroupName {
  if (!name.startsWith("role:"))
    throw new Error(`${setting.kind} setting ${setting.name} has the creator default ${name}`);
  return name as SystemGroupName;
}

export async function doCreateRealm(tx: Tx, input: NewRealm) {
  const names = Object.values(SystemGroups);
  // The realm's group settings are not null and its groups belong to it: take every id first,
  // then insert the realm and its groups in one statement, as foreign keys are checked at its end.
  const [ids0] = await tx.$queryRaw<{ realm_id: number; group_ids: number[] }[]>`
    SELECT nextval(pg_get_serial_sequence('realm', 'id'))::int AS realm_id,
           ARRAY(SELECT nextval(pg_get_serial_sequence('user_group', 'id'))::int FROM generate_series(1, ${names.length}::int)) AS group_ids`;
  const realmId = ids0!.realm_id;
  const ids = Object.fromEntries(names.map((name, i) => [name, ids0!.group_ids[i]!])) as Record<
    SystemGroupName,
    number
  >;
  // Every organization setting starts at Zulip's default (lib/groups/group-settings.ts).
  const settings = Object.values(REALM_GROUP_SETTINGS).map(
    (s) => [settingColumn(s), ids[systemDefault(s, s.default)]] as const,
  );
  const columns = [
    "id",
    "name",
    "string_id",
    "description",
    "rendered_description",
    "email_address_visibility",
    "uuid",
    ...settings.map(([c]) => c),
  ];
  const values: unknown[] = [
    realmId,
    input.name,
    input.stringId,
    input.description ?? "",
    input.description ? renderMarkdown(input.description).html : "",
    input.emailAddressVisibility ?? 1,
    randomUUID(),
    ...settings.map(([, id]) => id),
  ];
  const placeholders = values.map((_, i) => (i === 6 ? `$${i + 1}::uuid` : `$${i + 1}`)).join(", ");
  await tx.$executeRawUnsafe(
    `WITH r AS (INSERT INTO realm (${columns.map((c) => `"${c}"`).join(", ")}) VALUES (${placeholders}) RETURNING id)
     INSERT INTO user_group (id, realm_id) SELECT g, (SELECT id FROM r) FROM unnest($${values.length + 1}::int[]) AS g`,
    ...values,
    names.map((n) => ids[n]),
  );
  // System groups are managed by nobody: their settings take the registry's defaults for system
  // groups (role:nobody in Zulip).
  const systemGroupSettings = Object.fromEntries(
    Object.values(USER_GROUP_SETTINGS).map((s) => [
      s.field,
      ids[systemDefault(s, s.defaultForSystemGroups ?? s.default)],
    ]),
  ) as Record<(typeof USER_GROUP_SETTINGS)[keyof typeof USER_GROUP_SETTINGS]["field"], number>;
  await tx.namedUserGroup.createMany({
    data: names.map((name) => ({
      id: ids[name],
      realmId,
      name,
      description: DESCRIPTIONS[name],
      isSystemGroup: true,
      ...systemGroupSettings,
    })),
  });
  await tx.groupGroupMembership.createMany({
    data: SYSTEM_GROUP_NESTING.map(([sup, sub]) => ({
      supergroupId: ids[sup],
      subgroupId: ids[sub],
    })),
  });
  // Its defaults for new users' settings start at Zulip's (the columns' defaults).
  await tx.realmUserDefault.create({
    data: { realmId, emailAddressVisibility: input.emailAddressVisibility ?? 1 },
  });
  return tx.realm.findUniqueOrThrow({ where: { id: realmId } });
}

/**
 * The channels do_create_realm makes (Realm.ZULIP_DISCUSSION_CHANNEL_NAME, ZULIP_SANDBOX_CHANNEL_NAME,
 * DEFAULT_NOTIFICATION_STREAM_NAME), all default channels; new-channel and Zulip-update
 * announcements go to "general".
 */
export const INITIAL_CHANNELS: [name: string, description: string][] = [
  ["Zulip", "Questions and discussion about using Zulip."],
  ["sandbox", "Experiment with Zulip here. :test_tube:"],
  ["general", "For team-wide conversations"],
];

export interface NewOrganization extends NewRealm {
  owner: Omit<NewUser, "role" | "isBot" | "botType" | "botOwnerId">;
}

/**
 * A new organization as Zulip's realm creation leaves it (do_create_realm, then do_create_user
 * with realm_creation): the realm, its initial default channels, its owner subscribed to them,
 * and Notification Bot; one transaction. The subdomain's format is the caller's to check
 * (lib/realm/realm.ts subdomainProblem); here it is checked against the organizations that exist.
 */
export async function doCreateOrganization(
  deps: Pick<AppDeps, "db" | "config">,
  input: NewOrganization,
) {
  return deps.db
    .$transaction(
      async (tx) => {
        if (
          await tx.realm.findUnique({ where: { stringId: input.stringId }, select: { id: true } })
        )
          throw new JsonableError(SUBDOMAIN_IN_USE);
        const realm = await doCreateRealm(tx, input);
        const domain = await fakeEmailDomain(tx, realm, deps.config);
        const owner = await doCreateUser(tx, realm, { ...input.owner, role: Role.OWNER }, domain);
        for (const bot of INTERNAL_BOTS) await doCreateUser(tx, realm, bot, domain);
        const channels = [];
        for (const [name, description] of INITIAL_CHANNELS) {
          const stream = await doCreateChannel(tx, realm.id, { name, description });
          await doSubscribe(tx, realm.id, stream, [owner.id]);
          channels.push(stream);
        }
        await tx.defaultStream.createMany({
          data: channels.map((c) => ({ realmId: realm.id, streamId: c.id })),
        });
        const general = channels.find((c) => c.name === "general")!;
        await tx.realm.update({
          where: { id: realm.id },
          data: {
            newStreamAnnouncementsStreamId: general.id,
            zulipUpdateAnnouncementsStreamId: general.id,
          },
        });
        return { realm, owner, channels, url: await realmUrl(tx, realm, deps.config) };
      },
      { timeout: 60_000 },
    )
    .catch((err: unknown) => {
      // Two creations of the same subdomain at once: the unique index decides.
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002")
        throw new JsonableError(SUBDOMAIN_IN_USE);
      throw err;
    });
}

/*
 * Changing organization settings (zerver/actions/realm_settings.py do_set_realm_property):
 * the whole request is checked first, then every change is written in one transaction and
 * announced to the organization's users after commit.
 */
type TimeLimit = "unlimited" | number | null;

export interface RealmChanges {
  name?: string;
  description?: string;
  allow_message_editing?: boolean;
  message_content_edit_limit_seconds?: TimeLimit;
  move_messages_within_stream_limit_seconds?: TimeLimit;
  move_messages_between_streams_limit_seconds?: TimeLimit;
  /** The group settings this server offers (lib/groups/group-settings.ts OFFERED_REALM_SETTINGS). */
  can_resolve_topics_group?: GroupSettingUpdate;
  can_move_messages_between_channels_group?: GroupSettingUpdate;
  can_move_messages_between_topics_group?: GroupSettingUpdate;
  can_mention_many_users_group?: GroupSettingUpdate;
  can_delete_any_message_group?: GroupSettingUpdate;
  can_delete_own_message_group?: GroupSettingUpdate;
  can_add_custom_emoji_group?: GroupSettingUpdate;
  can_access_all_users_group?: GroupSettingUpdate;
  message_content_delete_limit_seconds?: TimeLimit;
  enable_read_receipts?: boolean;
  moderation_request_channel_id?: number;
  topics_policy?: "allow_empty_topic" | "disable_empty_topic";
  empty_topic_display_name?: string;
  welcome_message_custom_text?: string;
  enable_spectator_access?: boolean;
  email_address_visibility?: number;
  send_channel_events_messages?: boolean;
  avatar_changes_disabled?: boolean;
  gif_rating_policy?: number;
  media_preview_size?: number;
  video_chat_provider?: number;
  digest_emails_enabled?: boolean;
  digest_weekday?: number;
}

const TIME_LIMITS = {
  message_content_edit_limit_seconds: "messageContentEditLimitSeconds",
  move_messages_within_stream_limit_seconds: "moveMessagesWithinStreamLimitSeconds",
  move_messages_between_streams_limit_seconds: "moveMessagesBetweenStreamsLimitSeconds",
  message_content_delete_limit_seconds: "messageContentDeleteLimitSeconds",
} as const;

/** Settings of the deletion policy: changing them needs can_set_delete_message_policy_group. */
const DELETE_POLICY = [
  "can_delete_any_message_group",
  "can_delete_own_message_group",
  "message_content_delete_limit_seconds",
] as const;

type GroupSettingUpdate = { new: GroupSettingValue; old?: GroupSettingValue };

/**
 * Settings announced one by one in an `update` event (property, value), as Zulip's
 * do_set_realm_property announces its property_types settings.
 */
const PROPERTIES = {
  send_channel_events_messages: "sendChannelEventsMessages",
  avatar_changes_disabled: "avatarChangesDisabled",
  gif_rating_policy: "gifRatingPolicy",
  media_preview_size: "mediaPreviewSize",
  video_chat_provider: "videoChatProvider",
  // The weekly digest (workers/digest-emails.ts): whether, and on which day.
  digest_emails_enabled: "digestEmailsEnabled",
  digest_weekday: "digestWeekday",
} as const;

/** Settings announced together in one `update_dict` event, as Zulip groups them. */
const SIMPLE = {
  allow_message_editing: "allowMessageEditing",
  topics_policy: "topicsPolicy",
  enable_spectator_access: "enableSpectatorAccess",
  email_address_visibility: "emailAddressVisibility",
  enable_read_receipts: "enableReadReceipts",
} as const;

export async function doUpdateRealm(
  ctx: RequestContext,
  changes: RealmChanges,
): Promise<Record<string, unknown>> {
  const realm = ctx.realm;
  const data: Prisma.RealmUncheckedUpdateInput = {};
  const echoed: Record<string, unknown> = {};
  // Zulip's views/streams.py (and realm.py) refuse a change of the deletion policy by whoever is
  // outside can_set_delete_message_policy_group, before anything else.
  if (
    DELETE_POLICY.some((setting) => changes[setting] !== undefined) &&
    !(await can(ctx.db, ctx.user, realm, "can_set_delete_message_policy_group"))
  )
    throw new JsonableError("Insufficient permission");

  if (changes.name !== undefined && changes.name.trim() !== realm.name) {
    if (changes.name.trim() === "") throw new JsonableError("Organization name can't be empty.");
    data.name = changes.name.trim();
    echoed.name = "updated";
  }
  if (changes.description !== undefined && changes.description !== realm.description) {
    data.description = changes.description;
    data.renderedDescription = changes.description ? renderMarkdown(changes.description).html : "";
    echoed.description = "updated";
  }
  if (
    changes.empty_topic_display_name !== undefined &&
    changes.empty_topic_display_name.trim() !== realm.emptyTopicDisplayName
  ) {
    data.emptyTopicDisplayName = changes.empty_topic_display_name.trim();
    echoed.empty_topic_display_name = "updated";
  }
  if (
    changes.welcome_message_custom_text !== undefined &&
    changes.welcome_message_custom_text !== realm.welcomeMessageCustomText
  ) {
    data.welcomeMessageCustomText = changes.welcome_message_custom_text;
    echoed.welcome_message_custom_text = "updated";
  }
  for (const [setting, field] of Object.entries(TIME_LIMITS)) {
    const value = changes[setting as keyof typeof TIME_LIMITS];
    if (value === undefined) continue;
    const limit = value === "unlimited" || value === null ? null : value;
    if (limit !== null && limit < 1)
      throw new JsonableError(`Bad value for '${setting}': ${value}`);
    if (limit !== realm[field]) {
      data[field] = limit;
      echoed[setting] = limit;
    }
  }
  // The ids of Realm.GIF_RATING_POLICY_OPTIONS (media_preview_size's values the spec checks).
  const gif = changes.gif_rating_policy;
  if (gif !== undefined && !Object.values(GIF_RATING_POLICY_OPTIONS).some((o) => o.id === gif))
    throw new JsonableError(`Invalid gif_rating_policy ${gif}`);
  // update_realm: only a provider the server offers (Realm.VIDEO_CHAT_PROVIDERS).
  const provider = changes.video_chat_provider;
  if (
    provider !== undefined &&
    !Object.values(availableVideoChatProviders(ctx.config)).some((p) => p.id === provider)
  )
    throw new JsonableError(`Invalid video_chat_provider ${provider}`);
  for (const [setting, field] of [...Object.entries(SIMPLE), ...Object.entries(PROPERTIES)]) {
    const value = changes[setting as keyof typeof SIMPLE | keyof typeof PROPERTIES];
    if (value !== undefined && value !== realm[field as keyof typeof realm]) {
      (data as Record<string, unknown>)[field] = value;
      echoed[setting] = value;
    }
  }
  if (changes.moderation_request_channel_id !== undefined) {
    const id =
      changes.moderation_request_channel_id === -1 ? null : changes.moderation_request_channel_id;
    if (id !== null) {
      const stream = await ctx.db.stream.findFirst({
        where: { realmId: realm.id, id, isArchived: false },
        select: { id: true, inviteOnly: true },
      });
      if (!stream) throw new JsonableError("Invalid channel ID");
      // Reports quote messages from private places: only a private channel may receive them.
      if (!stream.inviteOnly)
        throw new JsonableError("Moderation request channel must be private.");
    }
    if (id !== realm.moderationRequestChannelId) {
      data.moderationRequestChannelId = id;
      echoed.moderation_request_channel_id = id ?? -1;
    }
  }

  // Only settings the API declares: anything else a client sends is reported as ignored.
  const groupUpdates = OFFERED_REALM_SETTINGS.flatMap((setting) => {
    const update = (changes as Record<string, GroupSettingUpdate | undefined>)[setting.name];
    return update ? [{ setting, update }] : [];
  });

  return inTransaction(ctx, realm.id, async ({ tx, events }) => {
    const replaced: number[] = [];
    const groupEvents: object[] = [];
    if (groupUpdates.length) {
      // The current values come from the row, locked: concurrent updates of a setting then take
      // turns, so an anonymous group is never updated by one and replaced by the other.
      const columns = groupUpdates
        .map(({ setting }) => `"${settingColumn(setting)}" AS "${setting.field}"`)
        .join(", ");
      const [current] = await tx.$queryRawUnsafe<Record<string, number>[]>(
        `SELECT ${columns} FROM realm WHERE id = $1 FOR UPDATE`,
        realm.id,
      );
      for (const { setting, update } of groupUpdates) {
        const change = await checkGroupSettingUpdate(
          tx,
          events,
          realm.id,
          setting,
          current![setting.field]!,
          update,
        );
        if (!change) continue;
        (data as Record<string, unknown>)[setting.field] = change.groupId;
        if (change.replacedGroupId !== null) replaced.push(change.replacedGroupId);
        echoed[setting.name] = change.value;
        groupEvents.push(settingChangeEvent(setting, realm, change.value));
      }
    }
    if (Object.keys(echoed).length === 0) return {};
    events.invalidate(`realm:${realm.id}`);
    await tx.realm.update({ where: { id: realm.id }, data });
    // Only now does no row reference the anonymous groups a named group replaced.
    await deleteAnonymousGroups(tx, replaced);
    const recipients = await activeUserIds(tx, realm.id);
    if (echoed.email_address_visibility !== undefined) {
      // The organization-wide policy applies to every user, and their API emails follow it.
      // One statement for every user; the new email is apiEmailFor's rule: the real address for
      // bots and under "everyone", else the dummy user<id>@<domain>.
      const visibility = echoed.email_address_visibility as number;
      const domain = await fakeEmailDomain(tx, realm, ctx.config);
      const changed = await tx.$queryRaw<{ id: number; old_email: string; new_email: string }[]>`
        WITH old AS (SELECT id, email FROM user_profile WHERE realm_id = ${realm.id} FOR UPDATE)
        UPDATE user_profile u SET email_address_visibility = ${visibility},
          email = CASE WHEN u.is_bot OR ${visibility}::int = ${EmailVisibility.EVERYONE}::int THEN u.delivery_email ELSE 'user' || u.id || '@' || ${domain} END
        FROM old WHERE u.id = old.id
        RETURNING u.id, old.email AS old_email, u.email AS new_email`;
      events.invalidate(`users:${realm.id}`);
      // New users take the policy too: it is also the organization's default for them
      // (RealmUserDefault, PATCH /realm/user_settings_defaults), kept equal here.
      const defaults = await tx.realmUserDefault.updateMany({
        where: { realmId: realm.id, emailAddressVisibility: { not: visibility } },
        data: { emailAddressVisibility: visibility },
      });
      if (defaults.count > 0)
        events.add(
          {
            type: "realm_user_settings_defaults",
            op: "update",
            property: "email_address_visibility",
            value: visibility,
          },
          recipients,
        );
      for (const u of changed.sort((a, b) => a.id - b.id))
        if (u.new_email !== u.old_email)
          events.add(
            { type: "realm_user", op: "update", person: { user_id: u.id, new_email: u.new_email } },
            recipients,
          );
    }
    await tx.realmAuditLog.create({
      data: {
        realmId: realm.id,
        actingUserId: ctx.user.id,
        eventType: 201,
        eventTime: ctx.now(),
        extraData: echoed as Prisma.InputJsonValue,
      },
    });
    for (const [property, value] of Object.entries(echoed)) {
      if (groupUpdates.some(({ setting }) => setting.name === property)) continue;
      if (property in PROPERTIES) {
        events.add({ type: "realm", op: "update", property, value }, recipients);
        continue;
      }
      const eventValue = value === "updated" ? changes[property as "name"] : value;
      events.add(
        { type: "realm", op: "update_dict", property: "default", data: { [property]: eventValue } },
        recipients,
      );
    }
    for (const event of groupEvents) events.add(event as ZulipEvent, recipients);
    return echoed;
  });
}
