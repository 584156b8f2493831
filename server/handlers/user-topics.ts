/** POST /user_topics and the deprecated PATCH /users/me/subscriptions/muted_topics (zerver/views/user_topics.py). */
import { doSetTopicVisibility } from "../actions/channels/user-topics.ts";
import {
  IncompatibleParametersError,
  JsonableError,
  RequestVariableMissingError,
} from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { accessChannel, findChannel } from "../lib/channels/channels.ts";
import { checkTopicName, TopicVisibility } from "../lib/messages/topics.ts";

/** POST /user_topics (update_user_topic). Removing a policy needs the channel to exist, not access to it. */
export const updateUserTopic: Handler<"update-user-topic"> = async ({ body }, ctx) => {
  const policy = body.visibility_policy;
  const stream =
    policy === TopicVisibility.INHERIT
      ? await findChannel(ctx.db, ctx.realm.id, { id: body.stream_id })
      : await accessChannel(ctx.db, ctx.user, { id: body.stream_id }, { allowArchived: true });
  if (!stream) throw new JsonableError("Invalid channel ID");
  await doSetTopicVisibility(
    ctx,
    {
      streamId: stream.id,
      recipientId: stream.recipientId,
      topic: checkTopicName(body.topic, ctx.realm),
    },
    policy,
  );
  return {};
};

/** PATCH /users/me/subscriptions/muted_topics (update_muted_topic): add mutes, remove unmutes; both idempotent since feature level 169. */
export const muteTopic: Handler<"mute-topic"> = async ({ body }, ctx) => {
  if (body.stream_id !== undefined && body.stream !== undefined)
    throw new IncompatibleParametersError(["stream_id", "stream"]);
  if (body.stream_id === undefined && body.stream === undefined)
    throw new RequestVariableMissingError("stream_id");
  const by = body.stream_id !== undefined ? { id: body.stream_id } : { name: body.stream! };
  const topic = checkTopicName(body.topic, ctx.realm);
  if (body.op === "add") {
    const stream = await accessChannel(ctx.db, ctx.user, by, { allowArchived: true });
    await doSetTopicVisibility(
      ctx,
      { streamId: stream.id, recipientId: stream.recipientId, topic },
      TopicVisibility.MUTED,
    );
  } else {
    const stream = await findChannel(ctx.db, ctx.realm.id, by);
    if (!stream) throw new JsonableError("Topic is not muted");
    await doSetTopicVisibility(
      ctx,
      { streamId: stream.id, recipientId: stream.recipientId, topic },
      TopicVisibility.INHERIT,
    );
  }
  return {};
};
