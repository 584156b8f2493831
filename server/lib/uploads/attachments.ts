/**
 * Attachments and the messages that reference them (Zulip's zerver/lib/attachments.py and
 * zerver/actions/uploads.py): who may see an uploaded file, a message or scheduled message
 * claiming the files its content links (`/user_uploads/<path_id>`), and an edit's changes to
 * them. Each is one statement, set-based whatever the number of links.
 */
import { Prisma, type Db, type RawTx, type Realm, type UserProfile } from "../../db/index.ts";
import { JsonableError, ResourceNotFoundError } from "../../errors.ts";
import type { Schemas } from "../schemas.ts";
import { renderMarkdown } from "../markdown/index.ts";
import type { RenderResult } from "../markdown/types.ts";
import { isStorableText } from "../text.ts";
import { unquote } from "./uploads.ts";
import { messageAccessSql, type Reader } from "../access/channels.ts";

/** An attachment in the spec's Attachment shape (create_time in seconds, message_ids: feature levels 443 and 472). */
export type DetachedUpload = Schemas["Attachment"];

/** What a content's links are known from: its Markdown source, or the result of rendering it. */
export type AttachmentLinks = string | Pick<RenderResult, "potentialAttachmentPathIds">;

const UPLOADS_PREFIX = "/user_uploads/";

/**
 * The path ids a content links, as Zulip's Markdown finds them: links and bare URLs outside code,
 * relative (`/user_uploads/…`) or absolute; query and fragment dropped. A percent-encoded path
 * is also tried decoded. Rendering a Markdown source finds relative links; an absolute one is
 * taken whatever its host, which only matters when a path id of this organization is linked
 * through another host (the caller may still claim only files it can see).
 */
export function linkedPathIds(content: AttachmentLinks): string[] {
  let found: string[];
  if (typeof content === "string") {
    if (!content.includes("user_uploads/")) return [];
    const rendered = renderMarkdown(content);
    found = [...rendered.potentialAttachmentPathIds];
    for (const [, href] of rendered.html.matchAll(/<a href="([^"]*)"/g)) {
      const path = absoluteUploadPath(decodeEntities(href!));
      if (path !== null) found.push(path);
    }
  } else found = [...content.potentialAttachmentPathIds];
  const ids = new Set<string>();
  for (const id of found) {
    ids.add(id);
    ids.add(unquote(id));
  }
  return [...ids].filter((id) => id !== "" && isStorableText(id));
}

function decodeEntities(html: string): string {
  return html.replace(
    /&(amp|lt|gt|quot);/g,
    (_m, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"' })[name]!,
  );
}

function absoluteUploadPath(href: string): string | null {
  const m = /^https?:\/\/[^/?#]+(\/[^?#]*)/i.exec(href);
  return m && m[1]!.startsWith(UPLOADS_PREFIX) ? m[1]!.slice(UPLOADS_PREFIX.length) : null;
}

/**
 * Whether `reader` may see attachment `a` (Zulip's validate_attachment_request): they uploaded it,
 * or they may read a message that references it (has_message_access, the rule of
 * channel-access.ts, as for GET /messages/{id}).
 */
function canAccess(reader: Reader): Prisma.Sql {
  const received = Prisma.sql`EXISTS (SELECT 1 FROM user_message um WHERE um.user_profile_id = ${reader.id} AND um.message_id = m.id)`;
  return Prisma.sql`(a.owner_id = ${reader.id} OR EXISTS (
    SELECT 1 FROM attachment_message am JOIN message m ON m.id = am.message_id
    LEFT JOIN stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id
    WHERE am.attachment_id = a.id AND m.realm_id = ${reader.realmId} AND ${messageAccessSql(reader, received)}))`;
}

export interface StoredAttachment {
  id: number;
  pathId: string;
  fileName: string;
  contentType: string | null;
}

/**
 * An attachment by path id that `reader` may see, in one statement, or Zulip's refusals: 404
 * when there is none, 403 when it is not theirs to see.
 */
export async function accessAttachment(
  db: Db,
  reader: Reader,
  pathId: string,
): Promise<StoredAttachment> {
  const [row] = isStorableText(pathId)
    ? await db.$queryRaw<(StoredAttachment & { allowed: boolean })[]>`
        SELECT a.id, a.path_id AS "pathId", a.file_name AS "fileName", a.content_type AS "contentType", ${canAccess(reader)} AS allowed
        FROM attachment a WHERE a.path_id = ${pathId}`
    : [];
  if (!row) throw new ResourceNotFoundError("This file does not exist or has been deleted.");
  if (!row.allowed)
    throw new JsonableError("You are not authorized to view this file.", { httpStatus: 403 });
  const { allowed, ...attachment } = row;
  return attachment;
}

/**
 * Links a new message (or scheduled message) to the uploads its content links that the sender
 * may share, its own or ones it can see (Zulip's do_claim_attachments), and sets its
 * has_attachment to whether it now has any. Returns whether any was claimed. Content without
 * such a link costs no statement.
 */
export async function claimAttachments(
  tx: RawTx,
  realm: Pick<Realm, "id">,
  sender: UserProfile,
  target: { messageId: number } | { scheduledMessageId: number },
  content: AttachmentLinks,
): Promise<boolean> {
  const pathIds = linkedPathIds(content);
  if (pathIds.length === 0) return false;
  const candidates = Prisma.sql`SELECT a.id FROM attachment a WHERE a.realm_id = ${realm.id} AND a.path_id = ANY (${pathIds}::text[]) AND ${canAccess(sender)}`;
  const [row] =
    "messageId" in target
      ? await tx.$queryRaw<{ claimed: number }[]>`
          WITH cand AS (${candidates}),
          ins AS (INSERT INTO attachment_message (attachment_id, message_id) SELECT id, ${target.messageId} FROM cand ON CONFLICT DO NOTHING),
          flag AS (SELECT EXISTS (SELECT 1 FROM cand) OR EXISTS (SELECT 1 FROM attachment_message WHERE message_id = ${target.messageId}) AS has),
          upd AS (UPDATE message m SET has_attachment = flag.has FROM flag WHERE m.id = ${target.messageId} AND m.has_attachment IS DISTINCT FROM flag.has)
          SELECT count(*)::int AS claimed FROM cand`
      : await tx.$queryRaw<{ claimed: number }[]>`
          WITH cand AS (${candidates}),
          ins AS (INSERT INTO attachment_scheduled_message (attachment_id, scheduled_message_id) SELECT id, ${target.scheduledMessageId} FROM cand ON CONFLICT DO NOTHING),
          flag AS (SELECT EXISTS (SELECT 1 FROM cand) OR EXISTS (SELECT 1 FROM attachment_scheduled_message WHERE scheduled_message_id = ${target.scheduledMessageId}) AS has),
          upd AS (UPDATE scheduled_message sm SET has_attachment = flag.has FROM flag WHERE sm.id = ${target.scheduledMessageId} AND sm.has_attachment IS DISTINCT FROM flag.has)
          SELECT count(*)::int AS claimed FROM cand`;
  return row!.claimed > 0;
}

/**
 * A content edit's effect on attachments (Zulip's check_attachment_reference_change), in one
 * statement: links the edit removed are dropped, new links the editor may share are claimed,
 * the message's has_attachment follows. Returns the detached uploads: the editor's own files
 * that this edit left referenced by no message and no scheduled message (the edit response's
 * `detached_uploads`, which clients offer to delete).
 */
export async function reconcileMessageAttachments(
  tx: RawTx,
  realm: Pick<Realm, "id">,
  editor: UserProfile,
  message: { id: number; senderId: number },
  newContent: AttachmentLinks,
): Promise<DetachedUpload[]> {
  const pathIds = linkedPathIds(newContent);
  const rows = await tx.$queryRaw<
    { id: number; name: string; path_id: string; size: number; create_time: bigint }[]
  >`
    WITH prev AS (
      SELECT a.id, a.path_id FROM attachment_message am JOIN attachment a ON a.id = am.attachment_id WHERE am.message_id = ${message.id}),
    removed AS (
      DELETE FROM attachment_message am USING prev
      WHERE am.message_id = ${message.id} AND am.attachment_id = prev.id AND NOT (prev.path_id = ANY (${pathIds}::text[]))
      RETURNING am.attachment_id),
    cand AS (
      SELECT a.id FROM attachment a
      WHERE a.realm_id = ${realm.id} AND a.path_id = ANY (${pathIds}::text[]) AND a.id NOT IN (SELECT id FROM prev) AND ${canAccess(editor)}),
    added AS (INSERT INTO attachment_message (attachment_id, message_id) SELECT id, ${message.id} FROM cand ON CONFLICT DO NOTHING),
    flag AS (SELECT EXISTS (SELECT 1 FROM prev WHERE path_id = ANY (${pathIds}::text[])) OR EXISTS (SELECT 1 FROM cand) AS has),
    upd AS (UPDATE message m SET has_attachment = flag.has FROM flag WHERE m.id = ${message.id} AND m.has_attachment IS DISTINCT FROM flag.has)
    SELECT a.id, a.file_name AS name, a.path_id, a.size, floor(extract(epoch FROM a.create_time))::bigint AS create_time
    FROM attachment a JOIN removed r ON r.attachment_id = a.id
    WHERE a.owner_id = ${editor.id}
      AND NOT EXISTS (SELECT 1 FROM attachment_message o WHERE o.attachment_id = a.id AND o.message_id <> ${message.id})
      AND NOT EXISTS (SELECT 1 FROM attachment_scheduled_message s WHERE s.attachment_id = a.id)
    ORDER BY a.id`;
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    path_id: r.path_id,
    size: r.size,
    create_time: Number(r.create_time),
    message_ids: [],
  }));
}

/**
 * GET /attachments (Zulip's user_attachments): the user's uploads, oldest first, each with the
 * messages that link it, and the organization's upload space, in one statement.
 */
export async function userAttachments(
  db: Db,
  user: Pick<UserProfile, "id" | "realmId">,
): Promise<{ attachments: DetachedUpload[]; uploadSpaceUsed: number }> {
  const rows = await db.$queryRaw<
    {
      id: number | null;
      name: string;
      path_id: string;
      size: number;
      create_time: bigint;
      message_ids: number[];
      used: bigint;
    }[]
  >`
    SELECT a.id, a.file_name AS name, a.path_id, a.size,
      floor(extract(epoch FROM a.create_time))::bigint AS create_time,
      COALESCE((SELECT array_agg(am.message_id ORDER BY am.message_id) FROM attachment_message am WHERE am.attachment_id = a.id), '{}') AS message_ids,
      used.total AS used
    FROM (SELECT COALESCE(sum(size), 0)::bigint AS total FROM attachment WHERE realm_id = ${user.realmId}) used
    LEFT JOIN attachment a ON a.owner_id = ${user.id} AND a.realm_id = ${user.realmId}
    ORDER BY a.id`;
  return {
    attachments: rows
      .filter((r) => r.id !== null)
      .map((r) => ({
        id: r.id!,
        name: r.name,
        path_id: r.path_id,
        size: r.size,
        create_time: Number(r.create_time),
        message_ids: r.message_ids,
      })),
    uploadSpaceUsed: Number(rows[0]?.used ?? 0),
  };
}
