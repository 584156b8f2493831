/**
 * Who may see a channel, read its messages and administer it (zerver/lib/message.py
 * has_message_access, zerver/lib/streams.py user_has_content_access / user_has_metadata_access,
 * can_administer_accessible_channel). Each rule is written once, as a formula over a few facts;
 * the same formula gives the TypeScript predicate (over facts already loaded), the SQL fragment
 * for a known user (over a `stream` row, for statements that test many messages at once) and the
 * SQL turned round (over a `user_profile` row too: which users may; messages.ts), so they can
 * never disagree (test/api/access-truth-table.test.ts checks every combination of the facts).
 * Callers that skip reading a fact (the user's groups, say) ask the formula whether the outcome
 * can turn on it (dependsOn) rather than assume its shape.
 */
import { Prisma, type Db, type UserProfile } from "../../db/index.ts";
import { userGroupIds } from "../groups/permissions.ts";
import { isGuest, isRealmAdmin, Role } from "../users/users.ts";

type Sql = Prisma.Sql;
export type Reader = Pick<UserProfile, "id" | "realmId" | "role">;

/** What the rules are written over: of the channel, of the user, and of the user and the channel. */
export interface AccessFacts {
  /** Not invite-only (web-public channels are public too). */
  public: boolean;
  webPublic: boolean;
  /** history_public_to_subscribers: subscribers read messages sent before they joined. */
  historyShared: boolean;
  archived: boolean;
  nonGuest: boolean;
  realmAdmin: boolean;
  subscribed: boolean;
  /** In the channel's can_subscribe_group or can_add_subscribers_group (Zulip's is_user_in_groups_granting_content_access). */
  inContentGroup: boolean;
  /** In the channel's can_administer_channel_group. */
  inAdminGroup: boolean;
  /** Has a user_message row for the message in question. */
  received: boolean;
}
type Fact = keyof AccessFacts;
type Formula = Fact | { and: Formula[] } | { or: Formula[] } | { not: Formula };
const and = (...f: Formula[]): Formula => ({ and: f });
const or = (...f: Formula[]): Formula => ({ or: f });
const not = (f: Formula): Formula => ({ not: f });

/**
 * A public channel to a user who may access public channels (Stream.is_public and
 * can_access_public_streams): what GET /streams' include_public lists, and where every rule below
 * starts.
 */
const CHANNEL_PUBLIC = and("public", "nonGuest");
/**
 * has_message_access for a channel message: a public channel for a non-guest; otherwise a
 * subscription or (not for guests, as those settings never hold them) a group that may subscribe
 * to it, and besides a shared history or the message received. A guest therefore reads a
 * web-public channel's messages only once subscribed, as in Zulip; a realm administrator has no
 * access of their own to a private channel's messages.
 */
const CHANNEL_MESSAGE = or(
  CHANNEL_PUBLIC,
  and(or("subscribed", and("nonGuest", "inContentGroup")), or("historyShared", "received")),
);
/** Changing a message (edits, moves): the same, and never in an archived channel (is_modifying_message). */
const CHANNEL_MESSAGE_CHANGE = and(not("archived"), CHANNEL_MESSAGE);
/** user_has_content_access: what accessing a channel by id or name requires (posting, subscribing oneself, moving messages there). */
const CHANNEL_CONTENT = or(
  "webPublic",
  "subscribed",
  and("nonGuest", or("public", "inContentGroup")),
);
/** access_stream_by_id / by_name: content access to a channel that is not archived. */
const CHANNEL_ACCESS = and(not("archived"), CHANNEL_CONTENT);
/** user_has_metadata_access: seeing that the channel exists and who is subscribed. */
const CHANNEL_METADATA = or(
  "webPublic",
  "subscribed",
  and("nonGuest", or("public", "realmAdmin", "inContentGroup", "inAdminGroup")),
);
/**
 * Seeing the channel's subscribers (gather_subscriptions_helper): metadata access, and a
 * subscription, a web-public channel or not being a guest.
 */
const CHANNEL_SUBSCRIBERS = and(CHANNEL_METADATA, or("subscribed", "webPublic", "nonGuest"));
/**
 * access_stream_for_send_message: a web-public channel, a public one for a non-guest, a
 * subscription, or (with shared history) a group that may subscribe to it. (A bot also posts
 * where its owner is subscribed; see actions/messages/messages.ts.)
 */
const CHANNEL_SEND = or(
  "webPublic",
  CHANNEL_PUBLIC,
  "subscribed",
  and("nonGuest", "historyShared", "inContentGroup"),
);
/**
 * A channel's topic list (get_topic_history_for_stream) is every topic, with no user_message row
 * needed, for whoever accesses it when its history is shared (web-public ones for guests too,
 * though a guest reads their messages only once subscribed); otherwise only the topics of the
 * user's own rows.
 */
const CHANNEL_TOPICS_WITHOUT_ROWS = and(CHANNEL_CONTENT, "historyShared");
/** "Administrator or channel administrator" (can_administer_channel_group never holds guests). */
const CHANNEL_ADMIN = or("realmAdmin", and("nonGuest", "inAdminGroup"));
/**
 * Rules of the channel alone. A message goes to the queues registered with all_public_streams
 * when its channel is not invite-only (Stream.is_public). The narrow `channels:public` names
 * the channels whose messages any member may read with no subscription (get_public_streams_queryset),
 * `channels:web-public` those of them that are web-public, `channels:archived` the archived ones
 * (read only through the user's own rows: it grants no history).
 */
const CHANNEL_ALL_PUBLIC_QUEUES: Formula = "public";
/** A bot whose default channel is private is heard of by its owner alone, not the administrators (bot_owner_user_ids). */
const CHANNEL_HIDES_BOT = not("public");
const NARROW_PUBLIC = and("public", "historyShared");
const NARROW_WEB_PUBLIC = and(NARROW_PUBLIC, "webPublic");
const NARROW_ARCHIVED: Formula = "archived";

export const AccessRule = {
  CHANNEL_PUBLIC,
  CHANNEL_MESSAGE,
  CHANNEL_MESSAGE_CHANGE,
  CHANNEL_CONTENT,
  CHANNEL_ACCESS,
  CHANNEL_METADATA,
  CHANNEL_SUBSCRIBERS,
  CHANNEL_SEND,
  CHANNEL_TOPICS_WITHOUT_ROWS,
  CHANNEL_ADMIN,
  CHANNEL_ALL_PUBLIC_QUEUES,
  CHANNEL_HIDES_BOT,
  NARROW_PUBLIC,
  NARROW_WEB_PUBLIC,
  NARROW_ARCHIVED,
} as const;
export type AccessRuleName = keyof typeof AccessRule;

function evaluate(f: Formula, facts: AccessFacts): boolean {
  if (typeof f === "string") return facts[f];
  if ("and" in f) return f.and.every((g) => evaluate(g, facts));
  if ("or" in f) return f.or.some((g) => evaluate(g, facts));
  return !evaluate(f.not, facts);
}

/** The facts, in a fixed order. */
export const FACTS: readonly Fact[] = [
  "public",
  "webPublic",
  "historyShared",
  "archived",
  "nonGuest",
  "realmAdmin",
  "subscribed",
  "inContentGroup",
  "inAdminGroup",
  "received",
];
/** The facts of the channel alone (the others are of the user, or of the user and the channel). */
export const CHANNEL_FACTS: readonly Fact[] = ["public", "webPublic", "historyShared", "archived"];
/** The facts that take the user's groups to know. */
export const GROUP_FACTS: readonly GroupFact[] = ["inContentGroup", "inAdminGroup"];

const dependence = new Map<string, boolean>();
/**
 * Whether the rule's outcome can turn on the `varying` facts once the `known` ones are fixed,
 * whatever the other facts are: when it cannot, a caller need not read them (the user's groups,
 * say). Worked out from the formula itself (every assignment of the free facts), and remembered.
 */
export function dependsOn(
  rule: AccessRuleName,
  varying: readonly Fact[],
  known: Partial<AccessFacts>,
): boolean {
  const key = `${rule}|${varying.join(",")}|${FACTS.map((f) => (f in known ? Number(known[f]) : "-")).join("")}`;
  const hit = dependence.get(key);
  if (hit !== undefined) return hit;
  const free = FACTS.filter((f) => !(f in known) && !varying.includes(f));
  let result = false;
  for (let i = 0; i < 1 << free.length && !result; i++) {
    const facts = { ...known } as AccessFacts;
    free.forEach((f, bit) => (facts[f] = ((i >> bit) & 1) === 1));
    let first: boolean | undefined;
    for (let j = 0; j < 1 << varying.length; j++) {
      varying.forEach((f, bit) => (facts[f] = ((j >> bit) & 1) === 1));
      const outcome = evaluate(AccessRule[rule], facts);
      if (first === undefined) first = outcome;
      else if (outcome !== first) {
        result = true;
        break;
      }
    }
  }
  dependence.set(key, result);
  return result;
}

/** The channel columns the facts are read from. */
export interface AccessChannel {
  inviteOnly: boolean;
  isWebPublic: boolean;
  historyPublicToSubscribers: boolean;
  isArchived: boolean;
  canSubscribeGroupId: number;
  canAddSubscribersGroupId: number;
  canAdministerChannelGroupId: number;
}

/** The facts of a loaded channel alone. */
export function channelFacts(
  channel: AccessChannel,
): Pick<AccessFacts, "public" | "webPublic" | "historyShared" | "archived"> {
  return {
    public: !channel.inviteOnly,
    webPublic: channel.isWebPublic,
    historyShared: channel.historyPublicToSubscribers,
    archived: channel.isArchived,
  };
}

/** Which of the channel's group settings give each group fact, by column (the predicate's and the SQL's). */
const GROUP_SETTINGS = {
  inContentGroup: [
    ["canSubscribeGroupId", "can_subscribe_group_id"],
    ["canAddSubscribersGroupId", "can_add_subscribers_group_id"],
  ],
  inAdminGroup: [["canAdministerChannelGroupId", "can_administer_channel_group_id"]],
} as const satisfies Record<string, readonly (readonly [keyof AccessChannel, string])[]>;
type GroupFact = keyof typeof GROUP_SETTINGS;

/** The groups whose members hold a group fact on the channel. */
export function groupFactSettings(fact: GroupFact, channel: AccessChannel): number[] {
  return GROUP_SETTINGS[fact].map(([field]) => channel[field]);
}

/** The facts about a user and a loaded channel, their groups known (`received`: of the message in question). */
export function accessFacts(
  user: Pick<UserProfile, "role">,
  channel: AccessChannel,
  subscribed: boolean,
  groups: ReadonlySet<number>,
  received = false,
): AccessFacts {
  const holds = (fact: GroupFact) => groupFactSettings(fact, channel).some((g) => groups.has(g));
  return {
    ...channelFacts(channel),
    nonGuest: !isGuest(user),
    realmAdmin: isRealmAdmin(user),
    subscribed,
    inContentGroup: holds("inContentGroup"),
    inAdminGroup: holds("inAdminGroup"),
    received,
  };
}

/** The TypeScript predicate of a rule. */
export function allows(rule: AccessRuleName, facts: AccessFacts): boolean {
  return evaluate(AccessRule[rule], facts);
}

/** A rule of the channel alone (CHANNEL_ALL_PUBLIC_QUEUES, NARROW_*), over a loaded channel. */
export function channelAllows(rule: AccessRuleName, channel: AccessChannel): boolean {
  const known = channelFacts(channel);
  const others = FACTS.filter((f) => !CHANNEL_FACTS.includes(f));
  if (dependsOn(rule, others, known)) throw new Error(`${rule} is not a rule of the channel alone`);
  return evaluate(AccessRule[rule], {
    ...known,
    ...Object.fromEntries(others.map((f) => [f, false])),
  } as AccessFacts);
}

/**
 * A rule over a user and a loaded channel, the user's groups read (through `groups`) only when
 * the outcome can turn on them (dependsOn).
 */
export async function allowsReadingGroups(
  rule: AccessRuleName,
  user: Pick<UserProfile, "role">,
  channel: AccessChannel,
  subscribed: boolean,
  groups: () => Promise<ReadonlySet<number>>,
  received = false,
): Promise<boolean> {
  const {
    inContentGroup: _c,
    inAdminGroup: _a,
    ...known
  } = accessFacts(user, channel, subscribed, NO_GROUPS, received);
  const needed = dependsOn(rule, GROUP_FACTS, known);
  return allows(
    rule,
    accessFacts(user, channel, subscribed, needed ? await groups() : NO_GROUPS, received),
  );
}
const NO_GROUPS: ReadonlySet<number> = new Set();

/**
 * Which of these users a rule allows on a channel none of them is subscribed to (who may see a
 * channel besides its subscribers), the members of the channel's group settings read (through
 * `members`, active users in any of the groups) only for the group facts the outcome can turn on.
 */
export async function allowedUsers<U extends Pick<UserProfile, "id" | "role">>(
  rule: AccessRuleName,
  users: U[],
  channel: AccessChannel,
  members: (groupIds: number[]) => Promise<ReadonlySet<number>>,
): Promise<U[]> {
  const known = { ...channelFacts(channel), subscribed: false, received: false };
  const holders = new Map<GroupFact, ReadonlySet<number>>();
  for (const fact of GROUP_FACTS)
    holders.set(
      fact,
      dependsOn(rule, [fact], known) ? await members(groupFactSettings(fact, channel)) : NO_GROUPS,
    );
  return users.filter((u) =>
    allows(rule, {
      ...accessFacts(u, channel, false, NO_GROUPS),
      inContentGroup: holders.get("inContentGroup")!.has(u.id),
      inAdminGroup: holders.get("inAdminGroup")!.has(u.id),
    }),
  );
}

/** Every group the user belongs to, directly or through subgroups, as a subquery (uncorrelated: under ARRAY(…) an InitPlan, run once per statement). */
export function userGroupsSql(user: Reader): Sql {
  return Prisma.sql`WITH RECURSIVE g(id) AS (
      SELECT user_group_id FROM user_group_membership WHERE user_profile_id = ${user.id}::int
      UNION SELECT ggm.supergroup_id FROM group_group_membership ggm JOIN g ON ggm.subgroup_id = g.id)
    SELECT id FROM g`;
}

/**
 * Whose access a statement tests: a user the caller knows (their facts become constants), a
 * `user_profile` row of the statement by its alias (the rule then says which users may), or no
 * one (a rule of the channel alone).
 */
export type Who = Reader | { alias: string } | null;

/**
 * The SQL fragment of a rule, over the stream row `stream` (an alias) and `who`; `received` is
 * the caller's test of the message's user_message row (FALSE when there is no message in question).
 */
export function accessSql(
  rule: AccessRuleName,
  who: Who,
  stream: string,
  received: Sql = Prisma.raw("FALSE"),
): Sql {
  const s = (column: string) => Prisma.raw(`${stream}.${column}`);
  const constant = (value: boolean) => Prisma.raw(value ? "TRUE" : "FALSE");
  const user = (): Reader | { alias: string } => {
    if (who === null) throw new Error(`${rule} is not a rule of the channel alone`);
    return who;
  };
  const groupsHold = (groupFact: GroupFact): Sql => {
    const u = user();
    const columns = GROUP_SETTINGS[groupFact].map(([, column]) => `${stream}.${column}`);
    const settings = Prisma.raw(`ARRAY[${columns.join(", ")}]`);
    if (!("alias" in u)) return Prisma.sql`${settings} && ARRAY(${userGroupsSql(u)})`;
    // The user's groups upward from their direct memberships, for the row at hand (a correlated
    // subquery: where the rule's cheaper facts decide, PostgreSQL never runs it).
    return Prisma.sql`EXISTS (WITH RECURSIVE access_groups(id) AS (
        SELECT ugm.user_group_id FROM user_group_membership ugm WHERE ugm.user_profile_id = ${Prisma.raw(u.alias)}.id
        UNION SELECT ggm.supergroup_id FROM group_group_membership ggm JOIN access_groups ag ON ggm.subgroup_id = ag.id)
      SELECT 1 FROM access_groups ag WHERE ag.id = ANY (${settings}))`;
  };
  const fact = (name: Fact): Sql => {
    switch (name) {
      case "public":
        return Prisma.sql`NOT ${s("invite_only")}`;
      case "webPublic":
        return s("is_web_public");
      case "historyShared":
        return s("history_public_to_subscribers");
      case "archived":
        return s("is_archived");
      case "nonGuest": {
        const u = user();
        return "alias" in u
          ? Prisma.sql`${Prisma.raw(u.alias)}.role <> ${Role.GUEST}::int`
          : constant(!isGuest(u));
      }
      case "realmAdmin": {
        const u = user();
        return "alias" in u
          ? Prisma.sql`${Prisma.raw(u.alias)}.role <= ${Role.ADMINISTRATOR}::int`
          : constant(isRealmAdmin(u));
      }
      case "subscribed": {
        const u = user();
        return "alias" in u
          ? Prisma.sql`EXISTS (SELECT 1 FROM subscription access_sub WHERE access_sub.user_profile_id = ${Prisma.raw(u.alias)}.id
              AND access_sub.recipient_id = ${s("recipient_id")} AND access_sub.active)`
          : Prisma.sql`${s("recipient_id")} IN (SELECT sub.recipient_id FROM subscription sub WHERE sub.user_profile_id = ${u.id}::int AND sub.active)`;
      }
      case "inContentGroup":
        return groupsHold("inContentGroup");
      case "inAdminGroup":
        return groupsHold("inAdminGroup");
      case "received":
        return received;
    }
  };
  const build = (f: Formula): Sql => {
    if (typeof f === "string") return fact(f);
    if ("not" in f) return Prisma.sql`NOT ${build(f.not)}`;
    const parts = "and" in f ? f.and : f.or;
    return Prisma.sql`(${Prisma.join(parts.map(build), "and" in f ? " AND " : " OR ")})`;
  };
  return build(AccessRule[rule]);
}

/**
 * Whether `who` may read message `m` (has_message_access), in SQL: a direct message they
 * received, or a channel message by the rule above, `s` being its channel's row LEFT JOINed
 * (`stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id`). `change`: to edit or
 * move it.
 */
export function messageAccessSql(
  who: Reader | { alias: string },
  received: Sql,
  options: { stream?: string; change?: boolean } = {},
): Sql {
  const stream = options.stream ?? "s";
  const rule = accessSql(
    options.change ? "CHANNEL_MESSAGE_CHANGE" : "CHANNEL_MESSAGE",
    who,
    stream,
    received,
  );
  return Prisma.sql`(CASE WHEN ${Prisma.raw(stream)}.id IS NULL THEN ${received} ELSE ${rule} END)`;
}

/**
 * The recipients of the organization's channels whose messages the user may not read even where
 * they have a user_message row (as a subquery): a narrow over the user's own rows leaves them
 * out, e.g. a private channel they have left.
 */
export function unreadableWithRowSql(user: Reader): Sql {
  return Prisma.sql`SELECT rs.recipient_id FROM stream rs WHERE rs.realm_id = ${user.realmId}::int AND rs.recipient_id IS NOT NULL
    AND NOT COALESCE(${accessSql("CHANNEL_MESSAGE", user, "rs", Prisma.raw("TRUE"))}, FALSE)`;
}

/**
 * Whether a subscriber of the channel may need a user_message row to read a message in it
 * (whether the rule can turn on `received` for a subscriber): then a message that enters the
 * channel gives its subscribers rows, and topics a user has no row in are gone for them.
 */
export function subscribersNeedRows(channel: AccessChannel): boolean {
  return dependsOn("CHANNEL_MESSAGE", ["received"], { ...channelFacts(channel), subscribed: true });
}

/** Whether the user administers the channel: an organization administrator, or in its can_administer_channel_group. */
export async function canAdministerChannel(
  db: Db,
  user: Reader,
  channel: AccessChannel,
): Promise<boolean> {
  return allowsReadingGroups("CHANNEL_ADMIN", user, channel, false, () => userGroupIds(db, user));
}

/**
 * The channels (as found by id or name) the user may access (access_stream_by_id /
 * access_stream_by_name, CHANNEL_ACCESS: content access to a channel that is not archived), and
 * those they may not, the user's groups read at most once.
 */
export async function accessChannels<C extends AccessChannel & { subscriberIds: number[] }>(
  db: Db,
  user: Reader,
  channels: Iterable<C>,
): Promise<{ accessible: C[]; inaccessible: C[] }> {
  let groups: Promise<ReadonlySet<number>> | undefined;
  const readGroups = () => (groups ??= userGroupIds(db, user));
  const accessible: C[] = [];
  const inaccessible: C[] = [];
  for (const channel of channels)
    ((await allowsReadingGroups(
      "CHANNEL_ACCESS",
      user,
      channel,
      channel.subscriberIds.includes(user.id),
      readGroups,
    ))
      ? accessible
      : inaccessible
    ).push(channel);
  return { accessible, inaccessible };
}
