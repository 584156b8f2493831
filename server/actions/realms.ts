/**
 * Creating an organization: the realm row, its system groups (Zulip's role:* groups nested
 * owners ⊂ administrators ⊂ moderators ⊂ fullmembers ⊂ members ⊂ everyone ⊂ internet, and
 * role:nobody) and the realm's permission settings pointing at them, in one transaction.
 */
import type { Tx } from "../db.ts";
import { renderMarkdown } from "../lib/markdown/index.ts";
import { SystemGroups, type SystemGroupName } from "../lib/user-groups.ts";

const NESTING: [SystemGroupName, SystemGroupName][] = [
  [SystemGroups.ADMINISTRATORS, SystemGroups.OWNERS],
  [SystemGroups.MODERATORS, SystemGroups.ADMINISTRATORS],
  [SystemGroups.FULL_MEMBERS, SystemGroups.MODERATORS],
  [SystemGroups.MEMBERS, SystemGroups.FULL_MEMBERS],
  [SystemGroups.EVERYONE, SystemGroups.MEMBERS],
  [SystemGroups.INTERNET, SystemGroups.EVERYONE],
];

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

/** Zulip's defaults for the realm's group settings (zerver/models/realms.py REALM_PERMISSION_GROUP_SETTINGS). */
const REALM_DEFAULTS = {
  canAccessAllUsersGroupId: SystemGroups.EVERYONE,
  canAddCustomEmojiGroupId: SystemGroups.MEMBERS,
  canAddSubscribersGroupId: SystemGroups.MEMBERS,
  canCreateBotsGroupId: SystemGroups.MEMBERS,
  canCreateGroupsId: SystemGroups.MEMBERS,
  canCreatePrivateChannelGroupId: SystemGroups.MEMBERS,
  canCreatePublicChannelGroupId: SystemGroups.MEMBERS,
  canCreateWebPublicChannelGroupId: SystemGroups.OWNERS,
  canCreateWriteOnlyBotsGroupId: SystemGroups.MEMBERS,
  canDeleteAnyMessageGroupId: SystemGroups.ADMINISTRATORS,
  canDeleteOwnMessageGroupId: SystemGroups.EVERYONE,
  canInviteUsersGroupId: SystemGroups.MEMBERS,
  canManageAllGroupsId: SystemGroups.OWNERS,
  canManageBillingGroupId: SystemGroups.ADMINISTRATORS,
  canMentionManyUsersGroupId: SystemGroups.ADMINISTRATORS,
  canMoveMessagesBetweenChannelsGroupId: SystemGroups.MEMBERS,
  canMoveMessagesBetweenTopicsGroupId: SystemGroups.EVERYONE,
  canResolveTopicsGroupId: SystemGroups.EVERYONE,
  canSetDeleteMessagePolicyGroupId: SystemGroups.MODERATORS,
  canSetTopicsPolicyGroupId: SystemGroups.MODERATORS,
  canSummarizeTopicsGroupId: SystemGroups.EVERYONE,
  createMultiuseInviteGroupId: SystemGroups.ADMINISTRATORS,
  directMessageInitiatorGroupId: SystemGroups.EVERYONE,
  directMessagePermissionGroupId: SystemGroups.EVERYONE,
} as const;

export interface NewRealm {
  name: string;
  stringId: string;
  description?: string;
  emailAddressVisibility?: number;
}

export async function doCreateRealm(tx: Tx, input: NewRealm) {
  const realm = await tx.realm.create({
    data: {
      name: input.name,
      stringId: input.stringId,
      description: input.description ?? "",
      renderedDescription: input.description ? renderMarkdown(input.description).html : "",
      emailAddressVisibility: input.emailAddressVisibility ?? 1,
    },
  });
  const ids = {} as Record<SystemGroupName, number>;
  for (const name of Object.values(SystemGroups)) ids[name] = (await tx.userGroup.create({ data: { realmId: realm.id } })).id;
  // System groups are managed by nobody: their settings all point at role:nobody.
  const nobody = ids[SystemGroups.NOBODY];
  await tx.namedUserGroup.createMany({
    data: Object.values(SystemGroups).map((name) => ({
      id: ids[name],
      realmId: realm.id,
      name,
      description: DESCRIPTIONS[name],
      isSystemGroup: true,
      canAddMembersGroupId: nobody,
      canJoinGroupId: nobody,
      canLeaveGroupId: nobody,
      canManageGroupId: nobody,
      canMentionGroupId: ids[SystemGroups.EVERYONE],
      canRemoveMembersGroupId: nobody,
    })),
  });
  await tx.groupGroupMembership.createMany({ data: NESTING.map(([sup, sub]) => ({ supergroupId: ids[sup], subgroupId: ids[sub] })) });
  const settings = Object.fromEntries(Object.entries(REALM_DEFAULTS).map(([field, group]) => [field, ids[group]]));
  return tx.realm.update({ where: { id: realm.id }, data: settings });
}
