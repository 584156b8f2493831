/**
 * The files of a Slack export's messages (Zulip's zerver/data_import/slack.py
 * process_message_files, and import_util.py build_attachment, build_uploads and process_uploads).
 * Slack's export holds no file, only each file's `url_private`, which answers with the
 * workspace's token (`Authorization: Bearer <token>`).
 *
 * - A file Slack hosts (its URL on files.slack.com), with a token: downloaded, streamed to
 *   `uploads/<path id>` of the converted export, with its record in `uploads/records.json` and its
 *   attachment row in `attachment.json`; the message links it as `[title](/user_uploads/<path id>)`,
 *   as Zulip's converter writes it, so that the import stores it as an upload of the organization.
 * - Without a token, or when the download fails: linked to Slack as it was, and reported as not
 *   copied.
 * - A file kept elsewhere (a Google Drive link): linked where it is, as Zulip does.
 * - Deleted files (`tombstone`), files hidden by Slack's free plan and files Slack says are
 *   inaccessible are skipped, as Zulip skips them.
 *
 * The token is only ever sent to Slack's file host: an export naming another host for a file
 * (which anyone could write into it) is linked, never fetched with the token.
 */
import { createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { newPathId, removeFile } from "../uploads/uploads.ts";
import { ATTACHMENT_FILE, ATTACHMENT_TABLE, FILE_DIRS, RECORDS_FILE, str } from "./zulip-format.ts";

/** Where Slack serves its files (Zulip's check of `url_private`). */
export const SLACK_FILES_HOST = "files.slack.com";
/** A download that takes longer than this fails (and the file stays linked to Slack). */
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

type Json = Record<string, unknown>;

export interface SlackFileOptions {
  /** The workspace's token: without it no file is downloaded. */
  token?: string;
  /** The hosts whose files are Slack's own (`host` or `host:port`): SLACK_FILES_HOST. */
  hosts?: string[];
}

/** A message's files, converted: the Markdown links to append, and what they make the message. */
export interface MessageFiles {
  links: string[];
  hasAttachment: boolean;
  hasImage: boolean;
  /** The attachment rows of the files downloaded, whose `messages` the caller fills in. */
  attachments: Json[];
}

export class SlackFiles {
  private readonly attachments: Json[] = [];
  private readonly records: Json[] = [];
  private readonly hosts: Set<string>;

  constructor(
    private readonly outDir: string,
    private readonly realmId: number,
    private readonly options: SlackFileOptions,
    private readonly count: (what: string, n?: number) => void,
  ) {
    this.hosts = new Set(options.hosts ?? [SLACK_FILES_HOST]);
  }

  /** The files of a message sent by `owner`: downloaded where possible, else linked. */
  async convert(message: Json, owner: { id: number; email: string }): Promise<MessageFiles> {
    const files: Json[] =
      message.subtype === "file_share" && message.file
        ? [message.file as Json]
        : Array.isArray(message.files)
          ? (message.files as Json[])
          : [];
    const out: MessageFiles = { links: [], hasAttachment: false, hasImage: false, attachments: [] };
    for (const file of files) {
      if (["tombstone", "hidden_by_limit"].includes(str(file.mode))) {
        this.count("files deleted or hidden at Slack skipped");
        continue;
      }
      if (["access_denied", "file_not_found"].includes(str(file.file_access))) {
        this.count("files Slack could not give skipped");
        continue;
      }
      const url = str(file.url_private) || str(file.permalink);
      const title = str(file.title) || str(file.name) || "file";
      if (!this.isSlacks(url)) {
        // Kept elsewhere (Google Drive, …): a link, as Zulip makes it.
        out.links.push(`[${title}](${url})`);
        continue;
      }
      const uploaded = this.options.token ? await this.download(file, url, owner) : null;
      if (!uploaded) {
        this.count(
          this.options.token
            ? "files linked, not copied (the download failed)"
            : "files linked, not copied",
        );
        out.links.push(`[${title}](${url})`);
        continue;
      }
      out.links.push(`[${title}](/user_uploads/${str(uploaded.path_id)})`);
      out.hasAttachment = true;
      if (str(file.mimetype).includes("image")) out.hasImage = true;
      out.attachments.push(uploaded);
    }
    return out;
  }

  private isSlacks(url: string): boolean {
    try {
      const parsed = new URL(url);
      return /^https?:$/.test(parsed.protocol) && this.hosts.has(parsed.host);
    } catch {
      return false;
    }
  }

  /**
   * Downloads a file to `uploads/<path id>`, streamed: its attachment row, or null when Slack
   * did not give it (an error status, its sign-in page, a network failure or the timeout).
   */
  private async download(
    file: Json,
    url: string,
    owner: { id: number; email: string },
  ): Promise<Json | null> {
    const name = str(file.name) || str(file.title) || "file";
    const pathId = newPathId(this.realmId, name);
    const target = join(this.outDir, FILE_DIRS.uploads, pathId);
    try {
      const response = await fetch(url, {
        headers: { Authorization: `Bearer ${this.options.token}` },
        signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
      });
      // Slack answers a request it does not accept with its sign-in page: no file either.
      const type = response.headers.get("content-type") ?? "";
      const signIn = type.startsWith("text/html") && !str(file.mimetype).startsWith("text/html");
      if (response.status !== 200 || !response.body || signIn) {
        await response.body?.cancel();
        return null;
      }
      mkdirSync(dirname(target), { recursive: true });
      const written = createWriteStream(target);
      await pipeline(Readable.fromWeb(response.body), written);
      const created = Number(file.created ?? file.timestamp) || Date.now() / 1000;
      this.records.push({
        realm_id: this.realmId,
        user_profile_id: owner.id,
        user_profile_email: owner.email,
        s3_path: pathId,
        path: pathId,
        size: written.bytesWritten,
        last_modified: Number(file.timestamp ?? created),
        content_type: null,
      });
      const row: Json = {
        id: this.attachments.length + 1,
        file_name: name,
        path_id: pathId,
        owner: owner.id,
        realm: this.realmId,
        create_time: created,
        size: written.bytesWritten,
        content_type: str(file.mimetype) || null,
        is_realm_public: true,
        is_web_public: false,
        messages: [],
        scheduled_messages: [],
      };
      this.attachments.push(row);
      return row;
    } catch {
      await removeFile(target);
      return null;
    }
  }

  /** `attachment.json` and `uploads/records.json` of the converted export. */
  write(): void {
    mkdirSync(join(this.outDir, FILE_DIRS.uploads), { recursive: true });
    writeFileSync(
      join(this.outDir, ATTACHMENT_FILE),
      JSON.stringify({ [ATTACHMENT_TABLE.key]: this.attachments }),
    );
    const records = [...this.records].sort((a, b) =>
      str(a.path) < str(b.path) ? -1 : str(a.path) > str(b.path) ? 1 : 0,
    );
    writeFileSync(
      join(this.outDir, FILE_DIRS.uploads, RECORDS_FILE),
      JSON.stringify(records, null, 2),
    );
  }
}
