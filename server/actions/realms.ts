/**
 * Creating an organization: the realm row, its system groups (Zulip's role:* groups nested
 * owners ⊂ administrators ⊂ moderators ⊂ fullmembers ⊂ members ⊂ everyone ⊂ internet, and
 * role:nobody) and the realm's permission settings pointing at them, in one transaction.
 */
import { randomUUID } from "node:crypto";
import type { Tx } from "../db.ts";
import { renderMarkdown } from "../lib/markdown/index.ts";
import { REALM_GROUP_SETTINGS, settingColumn, SystemGroups, USER_GROUP_SETTINGS, type DefaultGroup, type GroupSetting, type SystemGroupName } from "../lib/group-settings.ts";

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

export interface NewRealm {
  name: string;
  stringId: string;
  description?: string;
  emailAddressVisibility?: number;
}

/** A default that is a system group (creator defaults exist only for channels and user groups). */
function systemDefault(setting: GroupSetting, name: DefaultGroup): SystemGroupName {
  if (!name.startsWith("role:")) throw new Error(`${setting.kind} setting ${setting.name} has the creator default ${name}`);
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
  const ids = Object.fromEntries(names.map((name, i) => [name, ids0!.group_ids[i]!])) as Record<SystemGroupName, number>;
  // Every organization setting starts at Zulip's default (lib/group-settings.ts).
  const settings = Object.values(REALM_GROUP_SETTINGS).map((s) => [settingColumn(s), ids[systemDefault(s, s.default)]] as const);
  const columns = ["id", "name", "string_id", "description", "rendered_description", "email_address_visibility", "uuid", ...settings.map(([c]) => c)];
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
    Object.values(USER_GROUP_SETTINGS).map((s) => [s.field, ids[systemDefault(s, s.defaultForSystemGroups ?? s.default)]]),
  ) as Record<(typeof USER_GROUP_SETTINGS)[keyof typeof USER_GROUP_SETTINGS]["field"], number>;
  await tx.namedUserGroup.createMany({
    data: names.map((name) => ({ id: ids[name], realmId, name, description: DESCRIPTIONS[name], isSystemGroup: true, ...systemGroupSettings })),
  });
  await tx.groupGroupMembership.createMany({ data: NESTING.map(([sup, sub]) => ({ supergroupId: ids[sup], subgroupId: ids[sub] })) });
  return tx.realm.findUniqueOrThrow({ where: { id: realmId } });
}
