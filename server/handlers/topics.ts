/** GET /users/me/{stream_id}/topics (zerver/views/streams.py get_topics_backend). */
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { topicForClient, topicHistory } from "../lib/messages/topics.ts";

export const getStreamTopics: Handler<"get-stream-topics"> = async ({ path, query }, ctx) => {
  const topics = await topicHistory(ctx.db, ctx.user, path.stream_id);
  if (!topics) throw new JsonableError("Invalid channel ID");
  const allowEmpty = query.allow_empty_topic_name ?? false;
  return {
    topics: topics.map((t) => ({
      name: topicForClient(t.name, ctx.realm, allowEmpty),
      max_id: t.maxId,
    })),
  };
};
