/**
 * The one registry of group settings: every permission (`can_*_group` and a few others) of an
 * organization, a channel or a user group, with the model field that stores it, its default and
 * the rules its values obey (Zulip's GroupPermissionSetting in zerver/models/realms.py,
 * streams.py and groups.py). Validation, storage, defaults at creation, the register state,
 * events and permission checks all read it, so a new setting is one entry here (plus its column).
 */
import type { NamedUserGroup, Realm, Stream } from "../../db/index.ts";

/** Zulip's role-based system groups (zerver/models/groups.py SystemGroups). */
export const SystemGroups = {
  OWNERS: "role:owners",
  ADMINISTRATORS: "role:administrators",
  MODERATORS: "role:moderators",
  FULL_MEMBERS: "role:fullmembers",
  MEMBERS: "role:members",
  EVERYONE: "role:everyone",
  INTERNET: "role:internet",
  NOBODY: "role:nobody",
} as const;
export type SystemGroupName = (typeof SystemGroups)[keyof typeof SystemGroups];

/** How the system groups nest: each [supergroup, subgroup], a role's group holding the one above. */
export const SYSTEM_GROUP_NESTING: readonly [SystemGroupName, SystemGroupName][] = [
  [SystemGroups.ADMINISTRATORS, SystemGroups.OWNERS],
  [SystemGroups.MODERATORS, SystemGroups.ADMINISTRATORS],
  [SystemGroups.FULL_MEMBERS, SystemGroups.MODERATORS],
  [SystemGroups.MEMBERS, SystemGroups.FULL_MEMBERS],
  [SystemGroups.EVERYONE, SystemGroups.MEMBERS],
  [SystemGroups.INTERNET, SystemGroups.EVERYONE],
];

export type SettingKind = "realm" | "channel" | "group";

/**
 * A setting's default: a system group, or (as in Zulip) an anonymous group holding just the
 * channel's or group's creator — `role:nobody` when there is no creator.
 */
export type DefaultGroup = SystemGroupName | "channel_creator" | "group_creator";

/** Zulip's rules for a setting's values (check_setting_configuration_for_system_groups). */
export interface SettingRules {
  /** Only system groups (never a user-defined or an anonymous group): SYSTEM_GROUP_REQUIRED. */
  requireSystemGroup: boolean;
  allowInternetGroup: boolean;
  allowNobodyGroup: boolean;
  /**
   * Whether `role:everyone` may hold it. When not, guests never have the permission, whatever
   * the group (zerver/lib/user_groups.py user_has_permission_for_group_setting).
   */
  allowEveryoneGroup: boolean;
  /** When not empty, the only system groups allowed. */
  allowedSystemGroups: readonly SystemGroupName[];
}

interface Holders {
  realm: Realm;
  channel: Stream;
  group: NamedUserGroup;
}
/** The row that stores a setting of this kind. */
export type SettingHolder<K extends SettingKind> = Holders[K];
/** The model fields of a kind (of any of the kinds, for the union). */
type FieldOf<K extends SettingKind> = { [P in SettingKind]: keyof Holders[P] & string }[K];

export interface GroupSetting<K extends SettingKind = SettingKind> extends SettingRules {
  kind: K;
  /** The API name (`can_resolve_topics_group`); register reports realm ones as `realm_<name>`. */
  name: string;
  /** The model field holding the group id (`canResolveTopicsGroupId`). */
  field: FieldOf<K>;
  default: DefaultGroup;
  /** User groups: the default for system groups, whose settings nobody manages. */
  defaultForSystemGroups?: SystemGroupName;
  /** Whether an anonymous group (direct members and subgroups) may hold it: not for system-only settings. */
  allowAnonymousGroup: boolean;
  /**
   * Organization settings this server offers through PATCH /realm and POST /register
   * (`realm_<name>`), as its API document declares; the others are stored and checked only.
   */
  offered: boolean;
}

type Spec<K extends SettingKind> = Pick<
  GroupSetting<K>,
  "field" | "default" | "allowNobodyGroup" | "allowEveryoneGroup"
> &
  Partial<
    Pick<
      GroupSetting<K>,
      | "requireSystemGroup"
      | "allowInternetGroup"
      | "allowedSystemGroups"
      | "defaultForSystemGroups"
      | "offered"
    >
  >;

/** Fills in Zulip's dataclass defaults (require_system_group=False, allow_internet_group=False, …). */
function define<K extends SettingKind, T extends Record<string, Spec<K>>>(
  kind: K,
  specs: T,
): { [N in keyof T & string]: GroupSetting<K> & { name: N; field: T[N]["field"] } } {
  return Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => {
      const requireSystemGroup = spec.requireSystemGroup ?? false;
      const setting: GroupSetting<K> = {
        kind,
        name,
        requireSystemGroup,
        allowInternetGroup: spec.allowInternetGroup ?? false,
        allowedSystemGroups: spec.allowedSystemGroups ?? [],
        allowAnonymousGroup: !requireSystemGroup,
        offered: spec.offered ?? false,
        ...spec,
      };
      return [name, Object.freeze(setting)];
    }),
  ) as never;
}

const { OWNERS, ADMINISTRATORS, MODERATORS, MEMBERS, EVERYONE, NOBODY } = SystemGroups;

/** Organization settings (Realm.REALM_PERMISSION_GROUP_SETTINGS). */
export const REALM_GROUP_SETTINGS = define("realm", {
  create_multiuse_invite_group: {
    field: "createMultiuseInviteGroupId",
    default: ADMINISTRATORS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_access_all_users_group: {
    field: "canAccessAllUsersGroupId",
    default: EVERYONE,
    requireSystemGroup: true,
    allowNobodyGroup: false,
    allowEveryoneGroup: true,
    // Zulip's web app relies on members always seeing every user.
    allowedSystemGroups: [EVERYONE, MEMBERS],
    offered: true,
  },
  can_add_custom_emoji_group: {
    field: "canAddCustomEmojiGroupId",
    default: MEMBERS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
    offered: true,
  },
  can_add_subscribers_group: {
    field: "canAddSubscribersGroupId",
    default: MEMBERS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_create_bots_group: {
    field: "canCreateBotsGroupId",
    default: MEMBERS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_create_groups: {
    field: "canCreateGroupsId",
    default: MEMBERS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_create_private_channel_group: {
    field: "canCreatePrivateChannelGroupId",
    default: MEMBERS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_create_public_channel_group: {
    field: "canCreatePublicChannelGroupId",
    default: MEMBERS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_create_web_public_channel_group: {
    field: "canCreateWebPublicChannelGroupId",
    default: OWNERS,
    requireSystemGroup: true,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
    allowedSystemGroups: [MODERATORS, ADMINISTRATORS, OWNERS, NOBODY],
  },
  can_create_write_only_bots_group: {
    field: "canCreateWriteOnlyBotsGroupId",
    default: MEMBERS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_delete_any_message_group: {
    field: "canDeleteAnyMessageGroupId",
    default: ADMINISTRATORS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
    offered: true,
  },
  can_delete_own_message_group: {
    field: "canDeleteOwnMessageGroupId",
    default: EVERYONE,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
    offered: true,
  },
  can_invite_users_group: {
    field: "canInviteUsersGroupId",
    default: MEMBERS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_manage_all_groups: {
    field: "canManageAllGroupsId",
    default: OWNERS,
    allowNobodyGroup: false,
    allowEveryoneGroup: false,
  },
  can_manage_billing_group: {
    field: "canManageBillingGroupId",
    default: ADMINISTRATORS,
    allowNobodyGroup: false,
    allowEveryoneGroup: false,
  },
  can_mention_many_users_group: {
    field: "canMentionManyUsersGroupId",
    default: ADMINISTRATORS,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
    offered: true,
  },
  can_move_messages_between_channels_group: {
    field: "canMoveMessagesBetweenChannelsGroupId",
    default: MEMBERS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
    offered: true,
  },
  can_move_messages_between_topics_group: {
    field: "canMoveMessagesBetweenTopicsGroupId",
    default: EVERYONE,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
    offered: true,
  },
  can_resolve_topics_group: {
    field: "canResolveTopicsGroupId",
    default: EVERYONE,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
    offered: true,
  },
  can_set_delete_message_policy_group: {
    field: "canSetDeleteMessagePolicyGroupId",
    default: MODERATORS,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_set_topics_policy_group: {
    field: "canSetTopicsPolicyGroupId",
    default: MEMBERS,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_summarize_topics_group: {
    field: "canSummarizeTopicsGroupId",
    default: EVERYONE,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  direct_message_initiator_group: {
    field: "directMessageInitiatorGroupId",
    default: EVERYONE,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  direct_message_permission_group: {
    field: "directMessagePermissionGroupId",
    default: EVERYONE,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
});

/** Channel settings (Stream.stream_permission_group_settings). */
export const CHANNEL_GROUP_SETTINGS = define("channel", {
  can_add_subscribers_group: {
    field: "canAddSubscribersGroupId",
    default: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_administer_channel_group: {
    field: "canAdministerChannelGroupId",
    default: "channel_creator",
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_create_topic_group: {
    field: "canCreateTopicGroupId",
    default: EVERYONE,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_delete_any_message_group: {
    field: "canDeleteAnyMessageGroupId",
    default: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_delete_own_message_group: {
    field: "canDeleteOwnMessageGroupId",
    default: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_move_messages_out_of_channel_group: {
    field: "canMoveMessagesOutOfChannelGroupId",
    default: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_move_messages_within_channel_group: {
    field: "canMoveMessagesWithinChannelGroupId",
    default: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_remove_subscribers_group: {
    field: "canRemoveSubscribersGroupId",
    default: ADMINISTRATORS,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_resolve_topics_group: {
    field: "canResolveTopicsGroupId",
    default: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_send_message_group: {
    field: "canSendMessageGroupId",
    default: EVERYONE,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_subscribe_group: {
    field: "canSubscribeGroupId",
    default: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
});

/** User-group settings (NamedUserGroup.GROUP_PERMISSION_SETTINGS); system groups get `role:nobody` for all. */
export const USER_GROUP_SETTINGS = define("group", {
  can_add_members_group: {
    field: "canAddMembersGroupId",
    default: "group_creator",
    defaultForSystemGroups: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_join_group: {
    field: "canJoinGroupId",
    default: NOBODY,
    defaultForSystemGroups: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_leave_group: {
    field: "canLeaveGroupId",
    default: EVERYONE,
    defaultForSystemGroups: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_manage_group: {
    field: "canManageGroupId",
    default: "group_creator",
    defaultForSystemGroups: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
  can_mention_group: {
    field: "canMentionGroupId",
    default: EVERYONE,
    defaultForSystemGroups: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: true,
  },
  can_remove_members_group: {
    field: "canRemoveMembersGroupId",
    default: NOBODY,
    defaultForSystemGroups: NOBODY,
    allowNobodyGroup: true,
    allowEveryoneGroup: false,
  },
});

export type RealmSettingName = keyof typeof REALM_GROUP_SETTINGS;
export type ChannelSettingName = keyof typeof CHANNEL_GROUP_SETTINGS;
export type UserGroupSettingName = keyof typeof USER_GROUP_SETTINGS;

/** Every group setting, of every kind. */
export const GROUP_SETTINGS: readonly GroupSetting[] = [
  ...Object.values(REALM_GROUP_SETTINGS),
  ...Object.values(CHANNEL_GROUP_SETTINGS),
  ...Object.values(USER_GROUP_SETTINGS),
];

/** The organization settings PATCH /realm and POST /register offer. */
export const OFFERED_REALM_SETTINGS: readonly GroupSetting<"realm">[] = Object.values(
  REALM_GROUP_SETTINGS,
).filter((s) => s.offered);

/** The database column of a setting's field (`canCreateGroupsId` → `can_create_groups_id`). */
export function settingColumn(setting: GroupSetting): string {
  return setting.field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * The event announcing a new value to clients (zerver/actions/realm_settings.py
 * do_change_realm_permission_group_setting, streams.py do_change_stream_group_based_setting,
 * user_groups.py do_change_user_group_permission_setting).
 */
export function settingChangeEvent<K extends SettingKind>(
  setting: GroupSetting<K>,
  holder: Holders[K],
  value: unknown,
) {
  switch (setting.kind) {
    case "realm":
      return {
        type: "realm",
        op: "update_dict",
        property: "default",
        data: { [setting.name]: value },
      };
    case "channel": {
      const stream = holder as Stream;
      return {
        type: "stream",
        op: "update",
        stream_id: stream.id,
        name: stream.name,
        property: setting.name,
        value,
      };
    }
    default:
      return {
        type: "user_group",
        op: "update",
        group_id: (holder as NamedUserGroup).id,
        data: { [setting.name]: value },
      };
  }
}
