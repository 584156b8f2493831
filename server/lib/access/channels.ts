/**
 * Who may see a channel, read its messages and administer it (zerver/lib/message.py
 * has_message_access, zerver/lib/streams.py user_has_content_access / user_has_metadata_access,
 * can_administer_accessible_channel). Each rule is written once, as a formula over a few facts;
 * the same formula gives the TypeScript predicate (over facts already loaded) and the SQL
 * fragment (over a `stream` row, for statements that test many messages at once), so the two can
 * never disagree.
 */
import { Prisma, type Db, type UserProfile } from "../../db/index.ts";
import { userGroupIds } from "../groups/permissions.ts";
import { isGuest, isRealmAdmin } from "../users/users.ts";

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
 * has_message_access for a channel message: a public channel for a non-guest; otherwise a
 * subscription or (not for guests, as those settings never hold them) a group that may subscribe
 * to it, and besides a shared history or the message received. A guest therefore reads a
 * web-public channel's messages only once subscribed, as in Zulip; a realm administrator has no
 * access of their own to a private channel's messages.
 */
const CHANNEL_MESSAGE = or(
  and("public", "nonGuest"),
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
/** user_has_metadata_access: seeing that the channel exists and who is subscribed. */
const CHANNEL_METADATA = or(
  "webPublic",
  "subscribed",
  and("nonGuest", or("public", "realmAdmin", "inContentGroup", "inAdminGroup")),
);
/**
 * access_stream_for_send_message: a web-public channel, a public one for a non-guest, a
 * subscription, or (with shared history) a group that may subscribe to it. (A bot also posts
 * where its owner is subscribed; see actions/messages/messages.ts.)
 */
const CHANNEL_SEND = or(
  "webPublic",
  and("public", "nonGuest"),
  "subscribed",
  and("nonGuest", "historyShared", "inContentGroup"),
);
/** "Administrator or channel administrator" (can_administer_channel_group never holds guests). */
const CHANNEL_ADMIN = or("realmAdmin", and("nonGuest", "inAdminGroup"));

export const AccessRule = {
  CHANNEL_MESSAGE,
  CHANNEL_MESSAGE_CHANGE,
  CHANNEL_CONTENT,
  CHANNEL_METADATA,
  CHANNEL_SEND,
  CHANNEL_ADMIN,
} as const;
export type AccessRuleName = keyof typeof AccessRule;

function evaluate(f: Formula, facts: AccessFacts): boolean {
  if (typeof f === "string") return facts[f];
  if ("and" in f) return f.and.every((g) => evaluate(g, facts));
  if ("or" in f) return f.or.some((g) => evaluate(g, facts));
  return !evaluate(f.not, facts);
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

/** The facts about a user and a loaded channel, their groups known (`received`: of the message in question). */
export function accessFacts(
  user: Pick<UserProfile, "role">,
  channel: AccessChannel,
  subscribed: boolean,
  groups: ReadonlySet<number>,
  received = false,
): AccessFacts {
  return {
    public: !channel.inviteOnly,
    webPublic: channel.isWebPublic,
    historyShared: channel.historyPublicToSubscribers,
    archived: channel.isArchived,
    nonGuest: !isGuest(user),
    realmAdmin: isRealmAdmin(user),
    subscribed,
    inContentGroup:
      groups.has(channel.canSubscribeGroupId) || groups.has(channel.canAddSubscribersGroupId),
    inAdminGroup: groups.has(channel.canAdministerChannelGroupId),
    received,
  };
}

/** The TypeScript predicate of a rule. */
export function allows(rule: AccessRuleName, facts: AccessFacts): boolean {
  return evaluate(AccessRule[rule], facts);
}

/** Every group the user belongs to, directly or through subgroups, as a subquery (uncorrelated: under ARRAY(…) an InitPlan, run once per statement). */
export function userGroupsSql(user: Reader): Sql {
  return Prisma.sql`WITH RECURSIVE g(id) AS (
      SELECT user_group_id FROM user_group_membership WHERE user_profile_id = ${user.id}::int
      UNION SELECT ggm.supergroup_id FROM group_group_membership ggm JOIN g ON ggm.subgroup_id = g.id)
    SELECT id FROM g`;
}

/**
 * The SQL fragment of a rule, over the stream row `stream` (an alias) and the user; `received` is
 * the caller's test of the message's user_message row (FALSE when there is no message in question).
 */
export function accessSql(
  rule: AccessRuleName,
  user: Reader,
  stream: string,
  received: Sql = Prisma.raw("FALSE"),
): Sql {
  const s = (column: string) => Prisma.raw(`${stream}.${column}`);
  const constant = (value: boolean) => Prisma.raw(value ? "TRUE" : "FALSE");
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
      case "nonGuest":
        return constant(!isGuest(user));
      case "realmAdmin":
        return constant(isRealmAdmin(user));
      case "subscribed":
        return Prisma.sql`${s("recipient_id")} IN (SELECT sub.recipient_id FROM subscription sub WHERE sub.user_profile_id = ${user.id}::int AND sub.active)`;
      case "inContentGroup":
        return Prisma.sql`ARRAY[${s("can_subscribe_group_id")}, ${s("can_add_subscribers_group_id")}] && ARRAY(${userGroupsSql(user)})`;
      case "inAdminGroup":
        return Prisma.sql`${s("can_administer_channel_group_id")} = ANY (ARRAY(${userGroupsSql(user)}))`;
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
 * Whether the user may read message `m` (has_message_access), in SQL: a direct message they
 * received, or a channel message by the rule above, `s` being its channel's row LEFT JOINed
 * (`stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id`). `change`: to edit or
 * move it.
 */
export function messageAccessSql(
  user: Reader,
  received: Sql,
  options: { stream?: string; change?: boolean } = {},
): Sql {
  const stream = options.stream ?? "s";
  const rule = accessSql(
    options.change ? "CHANNEL_MESSAGE_CHANGE" : "CHANNEL_MESSAGE",
    user,
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

/** Whether the user administers the channel: an organization administrator, or in its can_administer_channel_group. */
export async function canAdministerChannel(
  db: Db,
  user: Reader,
  channel: AccessChannel,
): Promise<boolean> {
  if (isRealmAdmin(user)) return true;
  return allows(
    "CHANNEL_ADMIN",
    accessFacts(user, channel, false, isGuest(user) ? new Set() : await userGroupIds(db, user)),
  );
}
