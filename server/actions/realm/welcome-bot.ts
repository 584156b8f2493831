/**
 * POST /realm/test_welcome_bot_custom_message (zerver/views/welcome_bot_custom_message.py):
 * Welcome Bot sends the caller the custom message a new user would get, as a preview, through
 * the same internal send as at sign-up.
 */
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import { refuseNul } from "../../lib/text.ts";
import { internalSendMessage } from "../messages/internal-send.ts";
import { welcomeBot } from "../users/onboarding.ts";
import { inTransaction } from "../transaction.ts";

export async function doSendTestWelcomeBotCustomMessage(
  ctx: RequestContext,
  text: string,
): Promise<number> {
  if (text.length === 0) throw new JsonableError("Message must not be empty");
  refuseNul(text, "welcome message");
  const sender = await welcomeBot(ctx, ctx.realm);
  return inTransaction(ctx, ctx.realm.id, async (uow) => {
    const { id } = await internalSendMessage(uow, {
      deps: ctx,
      realm: ctx.realm,
      sender,
      target: { kind: "direct", userIds: [ctx.user.id] },
      content: text,
    });
    return id;
  });
}
