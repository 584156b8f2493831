/** GET, POST and DELETE /users/me/alert_words (zerver/views/alert_words.py). */
import { doAddAlertWords, doRemoveAlertWords } from "../actions/users/alert-words.ts";
import type { Handler } from "../http/types.ts";
import { cleanAlertWords, storableAlertWords, userAlertWords } from "../lib/users/alert-words.ts";

export const getAlertWords: Handler<"get-alert-words"> = async (_input, ctx) => ({
  alert_words: await userAlertWords(ctx.db, ctx.user.id),
});

/** Words are stripped and empty ones dropped (clean_alert_words); each at most 100 characters (the spec). */
export const addAlertWords: Handler<"add-alert-words"> = async ({ body }, ctx) => ({
  alert_words: await doAddAlertWords(ctx, cleanAlertWords(body.alert_words)),
});

/** Words to remove are taken as sent (not stripped), as Zulip's remove_alert_words does. */
export const removeAlertWords: Handler<"remove-alert-words"> = async ({ body }, ctx) => ({
  alert_words: await doRemoveAlertWords(ctx, storableAlertWords(body.alert_words)),
});
