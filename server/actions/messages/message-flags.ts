/**
 * Changing the user's message flags (zerver/actions/message_flags.py): a list of messages
 * (do_update_message_flags), a channel or topic (do_mark_stream_messages_as_read) and everything
 * (do_mark_all_as_read). Each change is set-based UPDATEs … RETURNING, whatever the number of
 * messages (a channel's or everything in batches of a bounded size, each its own transaction),
 * with its `update_message_flags` event in the same transaction.
 */
import type { RequestContext } from "../../context.ts";
import { Prisma, type RawTx, type UserProfile } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { ZulipEvent, UnitOfWork } from "../../events/index.ts";
import { DEFAULT_HISTORICAL_FLAGS, editableFlag, FLAG_BITS } from "../../lib/messages/flags.ts";
import { flagTargets } from "../../lib/messages/message-flags.ts";
import { isStorableId } from "../../lib/ids.ts";
import { unreadMessageDetails } from "../../lib/messages/unread.ts";
import { pushedMessageIds, queuePushRemovals } from "../push/push-notifications.ts";
import { inRawTransaction } from "../transaction.ts";

type Ctx = Pick<RequestContext, "db" | "events" | "realm" | "user">;

export interface FlagChange {
  /** The messages whose flag changed, in the order they were asked for. */
  changed: number[];
  /** Removing `read`: the channels whose messages were skipped, the user not being subscribed. */
  ignoredChannels?: number[];
}

/** Checks `op` (after the flag, as Zulip does). */
function checkOperation(op: string): op is "add" | "remove" {
  if (op !== "add" && op !== "remove")
    throw new JsonableError(`Invalid message flag operation: '${op}'`);
  return true;
}

/**
 * do_update_message_flags in the caller's transaction. Rows that already have the flag as asked
 * are left alone. Where the user has no row, the flags are taken to be read and historical:
 * adding `starred` or `collapsed` there (or removing `read`) first checks access and writes a
 * historical row; removing `read` skips the messages of channels the user is not subscribed to.
 */
async function updateFlags(
  { tx, events }: UnitOfWork<RawTx>,
  user: Pick<UserProfile, "id" | "realmId" | "role">,
  op: "add" | "remove",
  flag: string,
  messageIds: number[],
): Promise<FlagChange> {
  const bit = FLAG_BITS[editableFlag(flag)];
  const adding = op === "add";
  const target = adding ? bit : 0n;
  const removingRead = flag === "read" && !adding;
  let ids = [...new Set(messageIds)];
  const result: FlagChange = { changed: [] };
  const inserted = new Set<number>();

  if ((DEFAULT_HISTORICAL_FLAGS & bit) !== target) {
    const targets = new Map((await flagTargets(tx, user, ids)).map((t) => [t.id, t]));
    if (removingRead) {
      // Unread messages are only ever in subscribed channels.
      const ignored = new Set<number>();
      ids = ids.filter((id) => {
        const t = targets.get(id);
        if (t?.streamId == null || t.subscribed) return true;
        ignored.add(t.streamId);
        return false;
      });
      result.ignoredChannels = [...ignored].sort((a, b) => a - b);
    }
    const missing = ids.filter((id) => targets.get(id)?.flags == null);
    if (missing.some((id) => !targets.get(id)?.accessible))
      throw new JsonableError("Invalid message(s)");
    if (missing.length) {
      const flags = (DEFAULT_HISTORICAL_FLAGS & ~bit) | target;
      const rows = await tx.$queryRaw<{ message_id: number }[]>`
        INSERT INTO user_message (user_profile_id, message_id, flags)
        SELECT ${user.id}, unnest(${missing}::int[]), ${flags}::bigint
        ON CONFLICT (user_profile_id, message_id) DO NOTHING RETURNING message_id`;
      for (const r of rows) inserted.add(r.message_id);
    }
  }

  const storable = ids.filter(isStorableId);
  const updated = storable.length
    ? await tx.$queryRaw<{ message_id: number; flags: bigint }[]>`
        UPDATE user_message SET flags = ${adding ? Prisma.sql`flags | ${bit}::bigint` : Prisma.sql`flags & ~${bit}::bigint`}
        WHERE user_profile_id = ${user.id} AND message_id = ANY (${storable}::int[])
          AND (flags & ${bit}::bigint) <> ${target}::bigint
        RETURNING message_id, flags`
    : [];
  // Read here, their pushed notifications go from the user's phones too.
  if (flag === "read" && adding) await queuePushRemovals(tx, user.id, pushedMessageIds(updated));
  const changed = new Set([...inserted, ...updated.map((r) => r.message_id)]);
  result.changed = ids.filter((id) => changed.has(id));

  const event: ZulipEvent = {
    type: "update_message_flags",
    op,
    operation: op,
    flag,
    messages: result.changed,
    all: false,
  };
  // Clients add messages marked unread to their unread_msgs from these details.
  if (removingRead) event.message_details = await unreadMessageDetails(tx, user.id, result.changed);
  events.add(event, [user.id]);
  return result;
}

/** POST /messages/flags and /messages/flags/narrow: one transaction. */
export function doUpdateMessageFlags(
  ctx: Ctx,
  op: string,
  flag: string,
  messageIds: number[],
): Promise<FlagChange> {
  editableFlag(flag);
  checkOperation(op);
  return inRawTransaction(ctx, ctx.realm.id, ({ tx, events }) =>
    updateFlags({ tx, events }, ctx.user, op as "add" | "remove", flag, messageIds),
  );
}

/**
 * do_mark_stream_messages_as_read: the user's unread messages of a channel (or of one of its
 * topics, matched case-insensitively) marked read, newest first, in batches of READ_BATCH_SIZE
 * rows each committed on its own with the event naming its messages (none when nothing was
 * unread). Zulip marks them in one transaction; here a channel of 128,000 unread messages is
 * not one transaction of seconds, which would hold back the delivery of every event committed
 * after it (events reach queues in commit order) and the user's own next send (markReadBatch).
 */
export async function doMarkChannelAsRead(
  ctx: Ctx,
  recipientId: number,
  topic: string | null,
  options: { batchSize?: number } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? READ_BATCH_SIZE;
  // With the organization named, a batch reads the channel's (or topic's) message ids from the
  // (realm_id, recipient_id[, lower(subject)], id) index and merges them with the user's unread
  // ones; by recipient alone it walked every message by id and filtered (55 → 18 ms a batch).
  const channel = Prisma.sql`AND m.realm_id = ${ctx.realm.id} AND m.recipient_id = ${recipientId}
    ${topic === null ? Prisma.empty : Prisma.sql`AND lower(m.subject) = lower(${topic})`}`;
  let total = 0;
  let below: number | null = null;
  for (;;) {
    const marked: number[] = await inRawTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
      const messages = await markReadBatch(tx, ctx.user.id, below, batchSize, channel);
      if (messages.length) events.add(readEvent(messages, false), [ctx.user.id]);
      return messages;
    });
    total += marked.length;
    if (marked.length < batchSize) return total;
    below = marked[0]!;
  }
}

/**
 * One batch of a bulk read mark: the user's newest `limit` unread rows below `below` (all, when
 * null) that `scope` keeps (a condition on `m`, their message; null for every one) marked read
 * in one UPDATE. Returns the ids of the messages it marked, in order.
 *
 * Each batch starts below the last one: the unread index from there, not again over the entries
 * of the rows just marked (which stay in the index until vacuumed, each costing a visit of its
 * row: quadratic over a long backlog). No FOR UPDATE (which wrote each row twice: its lock, then
 * its new version): the UPDATE locks what it changes and tests `read` again on the row it locked,
 * so a row marked meanwhile by another request is left out (that request's event names it). The
 * batch's ids are one array the UPDATE finds by its key: joined as a subquery instead, a table
 * whose statistics predate a large insert was scanned once per id (18 s a batch at 50,000 rows).
 */
async function markReadBatch(
  tx: RawTx,
  userId: number,
  below: number | null,
  limit: number,
  scope: Prisma.Sql | null,
): Promise<number[]> {
  const rows = await tx.$queryRaw<{ message_id: number; flags: bigint }[]>`
    UPDATE user_message um SET flags = um.flags | ${FLAG_BITS.read}::bigint
    WHERE um.user_profile_id = ${userId} AND (um.flags & 1) = 0 AND um.message_id = ANY (ARRAY(
      SELECT u.message_id FROM user_message u ${scope ? Prisma.sql`JOIN message m ON m.id = u.message_id` : Prisma.empty}
      WHERE u.user_profile_id = ${userId} AND (u.flags & 1) = 0
        ${below === null ? Prisma.empty : Prisma.sql`AND u.message_id < ${below}`}
        ${scope ?? Prisma.empty}
      ORDER BY u.message_id DESC LIMIT ${limit}))
    RETURNING um.message_id, um.flags`;
  // Pushed notifications of these go from the user's phones (a statement only when there are any).
  await queuePushRemovals(tx, userId, pushedMessageIds(rows));
  return rows.map((r) => r.message_id).sort((a, b) => a - b);
}

function readEvent(messages: number[], all: boolean): ZulipEvent {
  return {
    type: "update_message_flags",
    op: "add",
    operation: "add",
    flag: "read",
    messages,
    all,
  };
}

/**
 * Rows marked read per transaction by mark_all_as_read and mark_stream_as_read (Zulip's
 * mark_all_as_read batch): each transaction a few tens of milliseconds at most.
 */
export const READ_BATCH_SIZE = 2_000;
/** How long mark_all_as_read keeps going before it answers `complete: false` (Zulip's timeout). */
export const MARK_ALL_TIMEOUT_MS = 50_000;

/**
 * do_mark_all_as_read: newest first, in batches each committed on its own so that progress
 * survives a long request; after the time limit, false (not complete). The last batch carries
 * the `all: true` event.
 */
export async function doMarkAllAsRead(
  ctx: Ctx,
  options: { batchSize?: number; timeoutMs?: number; now?: () => number } = {},
): Promise<boolean> {
  const batchSize = options.batchSize ?? READ_BATCH_SIZE;
  const timeoutMs = options.timeoutMs ?? MARK_ALL_TIMEOUT_MS;
  const now = options.now ?? (() => performance.now());
  const start = now();
  let below: number | null = null;
  for (;;) {
    if (now() - start >= timeoutMs) return false;
    const last: number | "done" = await inRawTransaction(
      ctx,
      ctx.realm.id,
      async ({ tx, events }) => {
        const marked = await markReadBatch(tx, ctx.user.id, below, batchSize, null);
        if (marked.length >= batchSize) return marked[0]!;
        events.add(readEvent([], true), [ctx.user.id]);
        return "done";
      },
    );
    if (last === "done") return true;
    below = last;
  }
}
