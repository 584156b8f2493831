/** POST /default_streams and DELETE /default_streams (add_default_stream, remove_default_stream). */
import { doAddDefaultStream, doRemoveDefaultStream } from "../actions/channels/default-streams.ts";
import type { Handler } from "../http/types.ts";

export const addDefaultStream: Handler<"add-default-stream"> = async ({ body }, ctx) => {
  await doAddDefaultStream(ctx, body.stream_id);
  return {};
};

export const removeDefaultStream: Handler<"remove-default-stream"> = async ({ body }, ctx) => {
  await doRemoveDefaultStream(ctx, body.stream_id);
  return {};
};
