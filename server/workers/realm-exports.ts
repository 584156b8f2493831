/**
 * Making the data exports administrators request (Zulip's deferred_work worker, event
 * `realm_export`), in every server process at once. A process claims a requested export (status
 * started, with a lease it renews while it works), writes it in Zulip's format
 * (lib/export/export-realm.ts, within the scope of its type, lib/export/export-scope.ts), keeps
 * the tarball in the upload store and records the outcome in one transaction with the
 * `realm_export` event and, on success, the notification bot's direct message to the requester.
 * An export whose process died (its lease ran out) is taken over and made again; the outcome
 * is recorded only by the process that holds the claim.
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rm, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { AppDeps } from "../context.ts";
import { internalSendMessage, notificationBot } from "../actions/messages/internal-send.ts";
import { notifyRealmExport } from "../actions/realm/realm-export-changed.ts";
import { inTransaction } from "../actions/transaction.ts";
import { exportRealm } from "../lib/export/export-realm.ts";
import { consentedUserIds, ExportType, type ExportTypeValue } from "../lib/export/export-scope.ts";
import { exportPathId, ExportStatus } from "../lib/realm/export.ts";
import { fakeEmailDomain } from "../lib/realm/realm.ts";
import { incomingDir } from "../lib/uploads/uploads.ts";
import { uploadStorage } from "../lib/uploads/upload-storage.ts";
import { DeliveryLoop, type DeliveryLoopOptions } from "./delivery-loop.ts";

/** How long a claim holds without renewal; renewed every third of it while the export runs. */
const LEASE_MS = 120_000;

type Deps = Pick<AppDeps, "db" | "log" | "config" | "now" | "events">;

export interface RealmExportsReport {
  /** Exports made (their ids). */
  succeeded: number[];
  failed: number[];
}

/** An export was requested here: look now. */
export function realmExportsRequested() {
  RealmExports.wakeRunning();
}

interface Claimed {
  id: number;
  realmId: number;
  type: number;
  actingUserId: number | null;
}

export class RealmExports extends DeliveryLoop<RealmExportsReport> {
  constructor(
    protected override readonly deps: Deps,
    options: DeliveryLoopOptions,
  ) {
    super(deps, { ...options, name: "data exports" });
  }

  protected async nextDueAt(): Promise<Date | null> {
    const [row] = await this.deps.db.$queryRaw<{ next: Date | null }[]>`
      SELECT min(CASE WHEN status = ${ExportStatus.REQUESTED} THEN date_requested ELSE claimed_until END) AS next
      FROM realm_export WHERE status IN (${ExportStatus.REQUESTED}, ${ExportStatus.STARTED})`;
    return row?.next ?? null;
  }

  protected async deliverAll(): Promise<RealmExportsReport> {
    const report: RealmExportsReport = { succeeded: [], failed: [] };
    while (!this.stopped) {
      const claimed = await this.claim();
      if (!claimed) break;
      const made = await this.make(claimed);
      (made ? report.succeeded : report.failed).push(claimed.id);
    }
    return report;
  }

  /** A requested export, or one whose claim ran out, now this process's. */
  private async claim(): Promise<Claimed | null> {
    const now = this.deps.now();
    const [row] = await this.deps.db.$queryRaw<Claimed[]>`
      UPDATE realm_export SET status = ${ExportStatus.STARTED},
        date_started = coalesce(date_started, ${now}),
        claimed_until = ${new Date(now.getTime() + LEASE_MS)}, claimed_by = ${this.processId}
      WHERE id = (SELECT id FROM realm_export
                  WHERE status = ${ExportStatus.REQUESTED}
                     OR (status = ${ExportStatus.STARTED} AND claimed_until <= ${now})
                  ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id, realm_id AS "realmId", type, acting_user_id AS "actingUserId"`;
    return row ?? null;
  }

  /** Makes the export and records how it went; whether it was made. */
  private async make(job: Claimed): Promise<boolean> {
    const { db, config, log } = this.deps;
    const renew = setInterval(() => {
      void db.$executeRaw`
        UPDATE realm_export SET claimed_until = ${new Date(this.deps.now().getTime() + LEASE_MS)}
        WHERE id = ${job.id} AND claimed_by = ${this.processId}`.catch(() => {});
    }, LEASE_MS / 3);
    renew.unref();
    const started = Date.now();
    const work = join(incomingDir(config), `export-${job.id}-${randomBytes(6).toString("hex")}`);
    let stored: string | null = null;
    try {
      const realm = await db.realm.findUniqueOrThrow({ where: { id: job.realmId } });
      if (job.actingUserId === null) throw new Error("the requester's account is gone");
      const scope = {
        type: job.type as ExportTypeValue,
        consenting:
          job.type === ExportType.FULL_WITH_CONSENT ? await consentedUserIds(db, realm.id) : [],
        secrets: false,
        fakeEmailDomain: await fakeEmailDomain(db, realm, config),
      };
      await mkdir(work, { recursive: true });
      const name = `zulip-export-${randomBytes(6).toString("hex")}`;
      const storage = await uploadStorage(config);
      const result = await exportRealm(db, realm.id, work, name, storage, scope);
      const size = (await stat(result.tarball)).size;
      const sha256 = await sha256Of(result.tarball);
      const exportPath = `exports/${realm.id}/${randomBytes(18).toString("base64url")}/${basename(result.tarball)}`;
      await (
        await uploadStorage(config)
      ).put(exportPathId(exportPath), { path: result.tarball, contentType: "application/gzip" });
      stored = exportPath;
      const sender = await notificationBot(this.deps, realm);
      const recorded = await inTransaction(this.deps, realm.id, async (unit) => {
        const done = await unit.tx.$executeRaw`
          UPDATE realm_export SET status = ${ExportStatus.SUCCEEDED},
            date_succeeded = ${this.deps.now()}, export_path = ${exportPath},
            sha256sum_hex = ${sha256}, tarball_size_bytes = ${size},
            stats = ${JSON.stringify({ messages: result.messages, files: result.files })}::jsonb,
            claimed_until = NULL
          WHERE id = ${job.id} AND claimed_by = ${this.processId} AND status = ${ExportStatus.STARTED}`;
        if (done === 0) return false;
        await notifyRealmExport(unit, this.deps, realm);
        await internalSendMessage(unit, {
          deps: this.deps,
          realm,
          sender,
          target: { kind: "direct", userIds: [job.actingUserId!] },
          content:
            "Your data export is complete. [View and download exports](/#organization/data-exports-admin).",
        });
        return true;
      });
      if (!recorded) {
        // Another process took the export over (this one's claim ran out): its file is theirs.
        await (await uploadStorage(config)).delete([exportPathId(exportPath)]);
        return false;
      }
      log.info(
        {
          exportId: job.id,
          realmId: realm.id,
          messages: result.messages,
          size,
          ms: Date.now() - started,
        },
        "data export made",
      );
      return true;
    } catch (err) {
      log.error({ err, exportId: job.id, realmId: job.realmId }, "data export failed");
      if (stored)
        await (await uploadStorage(config)).delete([exportPathId(stored)]).catch(() => {});
      await this.fail(job).catch((e: unknown) =>
        log.error({ err: e, exportId: job.id }, "recording a failed data export failed"),
      );
      return false;
    } finally {
      clearInterval(renew);
      await rm(work, { recursive: true, force: true });
    }
  }

  private async fail(job: Claimed) {
    const realm = await this.deps.db.realm.findUniqueOrThrow({ where: { id: job.realmId } });
    await inTransaction(this.deps, realm.id, async (unit) => {
      const done = await unit.tx.$executeRaw`
        UPDATE realm_export SET status = ${ExportStatus.FAILED}, date_failed = ${this.deps.now()},
          claimed_until = NULL
        WHERE id = ${job.id} AND claimed_by = ${this.processId} AND status = ${ExportStatus.STARTED}`;
      if (done) await notifyRealmExport(unit, this.deps, realm);
    });
  }
}

function sha256Of(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}
