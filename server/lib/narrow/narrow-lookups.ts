/**
 * The channels and users a narrow names, looked up together in one statement, with whether each
 * channel's whole history is readable to the user (the access rule of channel-access.ts).
 */
import { Prisma, type Db, type Realm, type UserProfile } from "../../db/index.ts";
import { accessSql } from "../access/channels.ts";
import { isStorableId } from "../ids.ts";

type Sql = Prisma.Sql;

/** Text PostgreSQL cannot store (a NUL character) names nothing, and must not reach a query. */
export const storableText = (text: string) => !text.includes("\u0000");

/** Channels and users a narrow names, looked up together in one statement. */
export interface ChannelInfo {
  recipientId: number | null;
  /** Whether the user may read the channel's history without a user_message row (channel-access.ts CHANNEL_MESSAGE). */
  historyReadable: boolean;
}
export interface UserInfo {
  id: number;
  recipientId: number | null;
}
export interface Lookups {
  channelIds: number[];
  channelNames: string[];
  userIds: number[];
  userEmails: string[];
}
export interface Resolved {
  channelsById: Map<number, ChannelInfo>;
  channelsByName: Map<number, ChannelInfo>;
  usersById: Map<number, UserInfo>;
  usersByEmail: Map<number, UserInfo>;
}
export type ChannelRef = (r: Resolved) => ChannelInfo | undefined;
export type UserRef = (r: Resolved) => UserInfo | undefined;

/** Registers keys to look up, returning how to find each one's answer; unstorable keys name nothing. */
export class LookupBuilder {
  readonly keys: Lookups = { channelIds: [], channelNames: [], userIds: [], userEmails: [] };
  channel(operand: string | number): ChannelRef {
    if (typeof operand === "number") {
      if (!isStorableId(operand)) return () => undefined;
      const i = this.keys.channelIds.push(operand) - 1;
      return (r) => r.channelsById.get(i);
    }
    if (!storableText(operand)) return () => undefined;
    const i = this.keys.channelNames.push(operand) - 1;
    return (r) => r.channelsByName.get(i);
  }
  user(operand: string | number): UserRef {
    if (typeof operand === "number") {
      if (!isStorableId(operand)) return () => undefined;
      const i = this.keys.userIds.push(operand) - 1;
      return (r) => r.usersById.get(i);
    }
    const email = operand.trim();
    if (!storableText(email)) return () => undefined;
    const i = this.keys.userEmails.push(email) - 1;
    return (r) => r.usersByEmail.get(i);
  }
}

/**
 * One statement for every channel and user the narrow names: by id, or case-insensitively by
 * name / API email through the (realm_id, lower(…)) unique indexes. Each key comes back with
 * its position, so an answer never depends on lowercasing the same way in JavaScript.
 */
export async function resolveLookups(
  db: Db,
  realm: Realm,
  user: UserProfile,
  keys: Lookups,
): Promise<Resolved> {
  const resolved: Resolved = {
    channelsById: new Map(),
    channelsByName: new Map(),
    usersById: new Map(),
    usersByEmail: new Map(),
  };
  // A channel's whole history is readable when its messages are, without a user_message row.
  const channelColumns = Prisma.sql`s.id, s.recipient_id AS "recipientId", ${accessSql("CHANNEL_MESSAGE", user, "s")} AS "historyReadable"`;
  const userColumns = Prisma.sql`u.id, u.recipient_id AS "recipientId", NULL::boolean AS "historyReadable"`;
  const parts: Sql[] = [];
  if (keys.channelIds.length)
    parts.push(Prisma.sql`SELECT 'channelsById' AS kind, t.i::int AS i, ${channelColumns}
      FROM unnest(${keys.channelIds}::int[]) WITH ORDINALITY AS t(id, i) JOIN stream s ON s.id = t.id AND s.realm_id = ${realm.id}`);
  if (keys.channelNames.length)
    parts.push(Prisma.sql`SELECT 'channelsByName' AS kind, t.i::int AS i, ${channelColumns}
      FROM unnest(${keys.channelNames}::text[]) WITH ORDINALITY AS t(name, i) JOIN stream s ON s.realm_id = ${realm.id} AND lower(s.name) = lower(t.name)`);
  if (keys.userIds.length)
    parts.push(Prisma.sql`SELECT 'usersById' AS kind, t.i::int AS i, ${userColumns}
      FROM unnest(${keys.userIds}::int[]) WITH ORDINALITY AS t(id, i) JOIN user_profile u ON u.id = t.id AND u.realm_id = ${realm.id}`);
  if (keys.userEmails.length)
    parts.push(Prisma.sql`SELECT 'usersByEmail' AS kind, t.i::int AS i, ${userColumns}
      FROM unnest(${keys.userEmails}::text[]) WITH ORDINALITY AS t(email, i) JOIN user_profile u ON u.realm_id = ${realm.id} AND lower(u.email) = lower(t.email)`);
  if (!parts.length) return resolved;
  const rows = await db.$queryRaw<
    {
      kind: keyof Resolved;
      i: number;
      id: number;
      recipientId: number | null;
      historyReadable: boolean | null;
    }[]
  >(Prisma.join(parts, " UNION ALL "));
  for (const row of rows) {
    // WITH ORDINALITY counts from 1.
    if (row.kind === "usersById" || row.kind === "usersByEmail")
      resolved[row.kind].set(row.i - 1, { id: row.id, recipientId: row.recipientId });
    else
      resolved[row.kind].set(row.i - 1, {
        recipientId: row.recipientId,
        historyReadable: !!row.historyReadable,
      });
  }
  return resolved;
}
