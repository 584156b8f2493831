/**
 * The message retention policy and the archive's cleaning, on a loop in every process (Zulip's
 * archive_messages and clean_archived_data crons, and delete_old_unclaimed_attachments):
 * - expired messages (lib/messages/retention.ts) move to the archive in batches, each one statement that
 *   locks its messages SKIP LOCKED, so processes sharing a database archive each message once.
 *   Each batch is its own transaction, with a `delete_message` event per channel topic or
 *   conversation to whoever may still read its messages (feature level 452, as
 *   do_delete_messages), and channels' first_message_id following.
 * - archive transactions older than ARCHIVED_DATA_VACUUMING_DELAY_DAYS are removed with
 *   everything in them.
 * - uploads no message, scheduled message or archived message links any more, created more
 *   than DELETE_UNCLAIMED_ATTACHMENTS_WEEKS ago, lose their row and then their file.
 */
import type { AppDeps } from "../context.ts";
import { expiredMessages, realmsWithRetention } from "../lib/messages/retention.ts";
import { uploadStorage } from "../lib/uploads/upload-storage.ts";
import { deleteImageAttachments, thumbnailPathIds } from "../lib/uploads/thumbnails.ts";
import { DeliveryLoop, type DeliveryLoopOptions } from "./delivery-loop.ts";
import { ArchiveType, deleteMessages } from "../actions/messages/message-delete.ts";
import { inRawTransaction } from "../actions/transaction.ts";

export interface RetentionReport {
  /** Messages this round moved to the archive. */
  archived: number;
  /** Archive transactions removed for good. */
  vacuumed: number;
  /** Upload files deleted. */
  filesDeleted: number;
}

type Deps = Pick<AppDeps, "db" | "log" | "config" | "now" | "events">;

const DAY_MS = 86_400_000;

export class MessageRetention extends DeliveryLoop<RetentionReport> {
  constructor(
    protected override readonly deps: Deps,
    options: DeliveryLoopOptions,
  ) {
    super(deps, { ...options, name: "message retention" });
  }

  /** Nothing is announced: the loop looks every interval. */
  protected nextDueAt(): Promise<Date | null> {
    return Promise.resolve(null);
  }

  protected async deliverAll(): Promise<RetentionReport> {
    const archived = await this.archiveExpired();
    const vacuumed = await this.vacuumArchive();
    const filesDeleted = await this.deleteUnclaimedAttachments();
    if (archived || vacuumed || filesDeleted)
      this.deps.log.info({ archived, vacuumed, filesDeleted }, "message retention");
    return { archived, vacuumed, filesDeleted };
  }

  /** archive_messages: each organization's expired channel messages, then its direct messages. */
  private async archiveExpired(): Promise<number> {
    let total = 0;
    const now = this.deps.now();
    for (const realmId of await realmsWithRetention(this.deps.db))
      for (const channels of [true, false])
        for (;;) {
          if (this.stopped) return total;
          const archived = await inRawTransaction(this.deps, realmId, (unit) =>
            deleteMessages(
              unit,
              realmId,
              expiredMessages(realmId, channels, now),
              null,
              ArchiveType.RETENTION_POLICY_BASED,
            ),
          );
          total += archived;
          if (archived === 0) break;
        }
    return total;
  }

  /** clean_archived_data: archive transactions past the delay, with their rows (ON DELETE CASCADE). */
  private vacuumArchive(): Promise<number> {
    const cutoff = new Date(
      this.deps.now().getTime() - this.deps.config.archivedDataVacuumingDelayDays * DAY_MS,
    );
    return this.deps.db.$executeRaw`DELETE FROM archive_transaction WHERE timestamp < ${cutoff}`;
  }

  /**
   * delete_old_unclaimed_attachments: a file goes once nothing links it (get_old_unclaimed_attachments):
   * old attachment rows no message, scheduled message or archived message links, and archived
   * copies no archived message links; the file when no attachment row keeps it. The rows go in one
   * statement, so only the process whose statement deleted a row removes its file.
   */
  private async deleteUnclaimedAttachments(): Promise<number> {
    const cutoff = new Date(
      this.deps.now().getTime() - this.deps.config.deleteUnclaimedAttachmentsWeeks * 7 * DAY_MS,
    );
    const rows = await this.deps.db.$queryRaw<{ path_id: string }[]>`
      WITH gone AS (
        DELETE FROM attachment a WHERE a.create_time < ${cutoff}
          AND NOT EXISTS (SELECT 1 FROM attachment_message x WHERE x.attachment_id = a.id)
          AND NOT EXISTS (SELECT 1 FROM attachment_scheduled_message x WHERE x.attachment_id = a.id)
          AND NOT EXISTS (SELECT 1 FROM archived_attachment_message x WHERE x.attachment_id = a.id)
        RETURNING a.id, a.path_id),
      archived_gone AS (
        DELETE FROM archived_attachment aa
        WHERE NOT EXISTS (SELECT 1 FROM archived_attachment_message x WHERE x.attachment_id = aa.id)
        RETURNING aa.id, aa.path_id)
      SELECT path_id FROM gone
      UNION SELECT g.path_id FROM archived_gone g WHERE NOT EXISTS (SELECT 1 FROM attachment a WHERE a.id = g.id)`;
    // Through the upload store, on disk or in S3 (Zulip's delete_message_attachments).
    if (rows.length) {
      const pathIds = rows.map((r) => r.path_id);
      await deleteImageAttachments(this.deps.db, pathIds);
      await (
        await uploadStorage(this.deps.config)
      ).delete([...pathIds, ...thumbnailPathIds(pathIds)]);
    }
    return rows.length;
  }
}
