/** POST /messages/render (zerver/views/message_send.py render_message_backend). */
import { markdownContext } from "../actions/messages/messages.ts";
import type { Handler } from "../http/types.ts";
import { renderMarkdown } from "../lib/markdown/index.ts";

/** The same context and renderer as a sent message's content; nothing is written. */
export const renderMessage: Handler<"render-message"> = async ({ body }, ctx) => ({
  rendered: renderMarkdown(body.content, await markdownContext(ctx, body.content)).html,
});
