/**
 * Drafts (zerver/lib/drafts.py, zerver/models/drafts.py): reading them as Zulip's Draft.to_dict
 * gives them, and the rules every draft sent by a client must follow.
 */
import type { Db, UserProfile } from "../../db/index.ts";
import { JsonableError, ResourceNotFoundError } from "../../errors.ts";
import { RecipientType } from "../recipients.ts";
import { MAX_TOPIC_NAME_LENGTH, normalizeContent } from "./topics.ts";

export type DraftType = "" | "stream" | "private";

/** A draft as the API gives it (Draft.to_dict). */
export interface DraftDict {
  id: number;
  type: DraftType;
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

/** Zulip's MAX_DRAFTS_IN_REGISTER_RESPONSE. */
const MAX_DRAFTS_IN_REGISTER_RESPONSE = 1000;

/**
 * The user's drafts in one statement: a direct-message group's recipients are its members but
 * the user, as Draft.to_dict lists them. Oldest edit first (GET /drafts), or newest first and
 * at most 1000 (register).
 */
export async function draftDicts(
  db: Db,
  userId: number,
  order: "oldest" | "newest",
): Promise<DraftDict[]> {
  const newest = order === "newest";
  const rows = await db.$queryRaw<
    {
      id: number;
      topic: string;
      content: string;
      seconds: number;
      type: number | null;
      typeId: number | null;
      members: number[] | null;
    }[]
  >`
    SELECT d.id, d.topic, d.content, floor(extract(epoch FROM d.last_edit_time))::int AS seconds,
           r.type, r.type_id AS "typeId",
           CASE WHEN r.type = ${RecipientType.DIRECT_MESSAGE_GROUP} THEN ARRAY(
             SELECT s.user_profile_id FROM subscription s
             WHERE s.recipient_id = r.id AND s.user_profile_id <> d.user_profile_id
             ORDER BY s.user_profile_id) END AS members
    FROM draft d LEFT JOIN recipient r ON r.id = d.recipient_id
    WHERE d.user_profile_id = ${userId}
    ORDER BY CASE WHEN ${newest} THEN d.last_edit_time END DESC,
             CASE WHEN NOT ${newest} THEN d.last_edit_time END ASC, d.id
    LIMIT ${newest ? MAX_DRAFTS_IN_REGISTER_RESPONSE : null}`;
  return rows.map((r) => ({
    id: r.id,
    type: r.type === null ? "" : r.type === RecipientType.STREAM ? "stream" : "private",
    to: r.type === null ? [] : (r.members ?? [r.typeId!]),
    topic: r.topic,
    content: r.content,
    timestamp: r.seconds,
  }));
}

/** Register's `drafts`: none while the user keeps drafts on their device only. */
export function registerDrafts(db: Db, user: UserProfile): Promise<DraftDict[]> | DraftDict[] {
  return user.enableDraftsSynchronization ? draftDicts(db, user.id, "newest") : [];
}

/** draft_endpoint: every draft operation needs the user's enable_drafts_synchronization. */
export function checkDraftsSynchronized(user: Pick<UserProfile, "enableDraftsSynchronization">) {
  if (!user.enableDraftsSynchronization)
    throw new JsonableError("User has disabled synchronizing drafts.");
}

export const draftDoesNotExist = () => new ResourceNotFoundError("Draft does not exist");

/** A draft as a client sends it (DraftData). */
export interface DraftInput {
  type: DraftType;
  to: number[];
  topic: string;
  content: string;
  timestamp?: number;
}

/**
 * The checks of further_validated_draft_dict that need no database, in its order: the content
 * (normalize_body), the timestamp (rounded to microseconds, never negative, the current time when
 * absent), then a channel draft's topic (truncated; no null bytes) and its single channel.
 */
export function checkDraftFields(draft: DraftInput, now: Date) {
  const content = normalizeContent(draft.content);
  const seconds = Math.round((draft.timestamp ?? now.getTime() / 1000) * 1e6) / 1e6;
  if (seconds < 0) throw new JsonableError("Timestamp must not be negative.");
  let topic = "";
  if (draft.type === "stream") {
    const chars = [...draft.topic];
    topic =
      chars.length > MAX_TOPIC_NAME_LENGTH
        ? chars.slice(0, MAX_TOPIC_NAME_LENGTH - 3).join("") + "..."
        : draft.topic;
    if (topic.includes("\x00")) throw new JsonableError("Topic must not contain null bytes");
    if (draft.to.length !== 1)
      throw new JsonableError("Must specify exactly 1 channel ID for channel messages");
  }
  return { content, topic, lastEditTime: new Date(seconds * 1000) };
}
