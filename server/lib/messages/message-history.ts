/**
 * A message's versions for GET /messages/{message_id}/history (zerver/views/message_edit.py
 * fill_edit_history_entries): from the message as it is now, walking its edit rows backwards,
 * each entry showing the message as that change left it; the first entry is the message as sent.
 */
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import type { Schemas } from "../schemas.ts";
import { accessMessage } from "./messages.ts";
import { unixSeconds } from "../time.ts";
import { topicForClient } from "./topics.ts";

type Entry = Schemas["MessageHistoryEntry"];
const NONE = 3;
const MOVES_ONLY = 2;

export async function messageHistory(
  ctx: RequestContext,
  messageId: number,
  allowEmptyTopicName: boolean,
): Promise<Entry[]> {
  if (ctx.realm.messageEditHistoryVisibilityPolicy === NONE)
    throw new JsonableError("Message edit history is disabled in this organization");
  const { message, related } = await accessMessage(ctx.db, ctx.user, messageId, ctx.realm);
  const topic = (t: string) =>
    message.isChannelMessage ? topicForClient(t, ctx.realm, allowEmptyTopicName) : t;
  const streamOf = related.recipients.find((r) => r.id === message.recipientId);
  const movesOnly = ctx.realm.messageEditHistoryVisibilityPolicy === MOVES_ONLY;

  // Newest first, as stored; content edits are left out when only moves are shown.
  const edits = related.edits.filter(
    (e) => !movesOnly || e.prevTopic !== null || e.prevStreamId !== null,
  );
  let content = message.content;
  let rendered = message.renderedContent;
  let currentTopic = topic(message.subject);
  let currentStream = message.isChannelMessage ? streamOf?.typeId : undefined;
  const entries: Entry[] = [];
  for (const e of edits) {
    const entry: Entry = {
      content,
      rendered_content: rendered,
      timestamp: e.editTime,
      topic: currentTopic,
      user_id: e.userId,
    };
    if (e.prevTopic !== null) {
      currentTopic = topic(e.prevTopic);
      entry.prev_topic = currentTopic;
    }
    if (e.prevContent !== null && !movesOnly) {
      entry.prev_content = e.prevContent;
      entry.prev_rendered_content = e.prevRenderedContent;
      content = e.prevContent;
      rendered = e.prevRenderedContent;
    }
    if (e.prevStreamId !== null && e.streamId !== null) {
      entry.prev_stream = e.prevStreamId;
      entry.stream = e.streamId;
      currentStream = e.prevStreamId;
    }
    entries.push(entry);
  }
  const first: Entry = {
    content,
    rendered_content: rendered,
    timestamp: unixSeconds(message.dateSent),
    topic: currentTopic,
    user_id: message.senderId,
  };
  if (currentStream !== undefined) first.stream = currentStream;
  entries.push(first);
  return entries.reverse();
}
