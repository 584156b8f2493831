/**
 * Adding and deactivating custom emoji (zerver/actions/realm_emoji.py check_add_realm_emoji,
 * do_remove_realm_emoji). One transaction writes the row, places the image in the upload store
 * (lib/uploads/upload-storage.ts) under its hashed file name, records the audit row and sends `realm_emoji` (the whole set, or the one emoji) to
 * every active user; if anything fails the image is removed again. Images are stored as
 * uploaded: Zulip resizes them to 64×64 with PIL, and this server has no image library.
 */
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import type { UnitOfWork } from "../../events/index.ts";
import {
  emojiExtension,
  emojiFileName,
  emojiPathId,
  realmEmojiDicts,
} from "../../lib/realm/realm-emoji.ts";
import { uploadStorage } from "../../lib/uploads/upload-storage.ts";
import { signingKey, type ReceivedFile } from "../../lib/uploads/uploads.ts";
import { activeUserIds } from "../../lib/users/users.ts";
import { inTransaction } from "../transaction.ts";

/** AuditLogEventType.REALM_EMOJI_ADDED / REALM_EMOJI_REMOVED. */
const REALM_EMOJI_ADDED = 226;
const REALM_EMOJI_REMOVED = 227;

export async function checkAddRealmEmoji(
  ctx: RequestContext,
  name: string,
  file: ReceivedFile,
): Promise<void> {
  const ext = emojiExtension(file.contentType);
  // Read before the transaction: the file name is a keyed hash of the row's id.
  const key = await signingKey(ctx.db);
  const storage = await uploadStorage(ctx.config);
  let placed: string | null = null;
  try {
    await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
      // The partial unique index on active names settles a race with another upload.
      const [row] = await tx.$queryRaw<{ id: number }[]>`
        INSERT INTO realm_emoji (realm_id, author_id, name, date_created)
        VALUES (${ctx.realm.id}, ${ctx.user.id}, ${name}, ${ctx.now()})
        ON CONFLICT (realm_id, name) WHERE NOT deactivated DO NOTHING
        RETURNING id`;
      if (!row) throw new JsonableError("A custom emoji with this name already exists.");
      const fileName = emojiFileName(key, row.id, ext);
      placed = emojiPathId(ctx.realm.id, fileName);
      await storage.put(placed, file);
      await tx.realmEmoji.update({ where: { id: row.id }, data: { fileName } });
      await notifyRealmEmoji(ctx, { tx, events }, REALM_EMOJI_ADDED, "added_emoji", row.id);
    });
  } catch (err) {
    if (placed) await storage.delete([placed]);
    throw err;
  }
}

/** Deactivates the emoji (its image stays: old messages, reactions and statuses still show it). */
export async function doRemoveRealmEmoji(ctx: RequestContext, emojiId: number): Promise<void> {
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    await tx.realmEmoji.update({ where: { id: emojiId }, data: { deactivated: true } });
    await notifyRealmEmoji(ctx, { tx, events }, REALM_EMOJI_REMOVED, "deactivated_emoji", emojiId);
  });
}

/**
 * The audit row (with the whole set, as Zulip's) and the `realm_emoji` event to every active
 * user: the whole set, or (`individual_emoji_changes`) the one emoji added or deactivated.
 */
async function notifyRealmEmoji(
  ctx: RequestContext,
  { tx, events }: UnitOfWork,
  eventType: number,
  key: "added_emoji" | "deactivated_emoji",
  emojiId: number,
): Promise<void> {
  const realmEmoji = await realmEmojiDicts(tx, ctx.realm.id);
  await tx.realmAuditLog.create({
    data: {
      realmId: ctx.realm.id,
      actingUserId: ctx.user.id,
      eventType,
      eventTime: ctx.now(),
      extraData: { realm_emoji: realmEmoji, [key]: realmEmoji[String(emojiId)] },
    },
  });
  // Both forms are logged; each queue takes the one its client asked for (events/queues.ts).
  const userIds = await activeUserIds(tx, ctx.realm.id);
  events.add({ type: "realm_emoji", op: "update", realm_emoji: realmEmoji }, userIds);
  const emoji = realmEmoji[String(emojiId)]!;
  events.add(
    key === "added_emoji"
      ? { type: "realm_emoji", op: "add", emoji }
      : { type: "realm_emoji", op: "update_one", emoji_id: emoji.id, data: { deactivated: true } },
    userIds,
  );
}
