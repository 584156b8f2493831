/**
 * Creating an organization: the realm row, its system groups (Zulip's role:* groups nested
 * owners ⊂ administrators ⊂ moderators ⊂ fullmembers ⊂ members ⊂ everyone ⊂ internet, and
 * role:nobody) and the realm's permission settings pointing at them, in one transaction;
 * doCreateOrganization adds what a new organization starts with (owner, channels, bot).
 */
import { randomUUID } from "node:crypto";
import type { AppDeps } from "../context.ts";
import { Prisma, type Tx } from "../db.ts";
import { JsonableError } from "../errors.ts";
import { REALM_GROUP_SETTINGS, settingColumn, SystemGroups, USER_GROUP_SETTINGS, type DefaultGroup, type GroupSetting, type SystemGroupName } from "../lib/group-settings.ts";
import { renderMarkdown } from "../lib/markdown/index.ts";
import { fakeEmailDomain, realmUrl, SUBDOMAIN_IN_USE } from "../lib/realms.ts";
import { Role } from "../lib/users.ts";
import { doCreateChannel } from "./channels.ts";
import { NOTIFICATION_BOT_EMAIL } from "./internal-send.ts";
import { doSubscribe } from "./subscriptions.ts";
import { doCreateUser, type NewUser } from "./users.ts";

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
 * (lib/realms.ts subdomainProblem); here it is checked against the organizations that exist.
 */
export async function doCreateOrganization(deps: Pick<AppDeps, "db" | "config">, input: NewOrganization) {
  return deps.db.$transaction(
    async (tx) => {
      if (await tx.realm.findUnique({ where: { stringId: input.stringId }, select: { id: true } })) throw new JsonableError(SUBDOMAIN_IN_USE);
      const realm = await doCreateRealm(tx, input);
      const domain = await fakeEmailDomain(tx, realm, deps.config);
      const owner = await doCreateUser(tx, realm, { ...input.owner, role: Role.OWNER }, domain);
      await doCreateUser(tx, realm, { email: NOTIFICATION_BOT_EMAIL, fullName: "Notification Bot", role: Role.MEMBER, isBot: true, botType: 1 }, domain);
      const channels = [];
      for (const [name, description] of INITIAL_CHANNELS) {
        const stream = await doCreateChannel(tx, realm.id, { name, description });
        await doSubscribe(tx, realm.id, stream, [owner.id]);
        channels.push(stream);
      }
      await tx.defaultStream.createMany({ data: channels.map((c) => ({ realmId: realm.id, streamId: c.id })) });
      const general = channels.find((c) => c.name === "general")!;
      await tx.realm.update({ where: { id: realm.id }, data: { newStreamAnnouncementsStreamId: general.id, zulipUpdateAnnouncementsStreamId: general.id } });
      return { realm, owner, channels, url: await realmUrl(tx, realm, deps.config) };
    },
    { timeout: 60_000 },
  ).catch((err: unknown) => {
    // Two creations of the same subdomain at once: the unique index decides.
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") throw new JsonableError(SUBDOMAIN_IN_USE);
    throw err;
  });
}
