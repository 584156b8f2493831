/** POST /realm/playgrounds, DELETE /realm/playgrounds/{playground_id} (zerver/views/realm_playgrounds.py). */
import { doAddRealmPlayground, doRemoveRealmPlayground } from "../actions/realm/playgrounds.ts";
import type { Handler } from "../http/types.ts";
import { checkPygmentsLanguage } from "../lib/realm/playgrounds.ts";

/** require_realm_admin, then the language's parameter check, then the model's. */
export const addCodePlayground: Handler<"add-code-playground"> = async ({ body }, ctx) => {
  const pygmentsLanguage = checkPygmentsLanguage(body.pygments_language);
  return {
    id: await doAddRealmPlayground(ctx, {
      name: body.name,
      pygmentsLanguage,
      urlTemplate: body.url_template,
    }),
  };
};

export const removeCodePlayground: Handler<"remove-code-playground"> = async ({ path }, ctx) => {
  await doRemoveRealmPlayground(ctx, path.playground_id);
  return {};
};
