/** Saved snippets (zerver/views/saved_snippets.py). */
import {
  doCreateSavedSnippet,
  doDeleteSavedSnippet,
  doEditSavedSnippet,
} from "../actions/users/saved-snippets.ts";
import type { Handler } from "../http/types.ts";
import { checkSnippetText, savedSnippetDicts } from "../lib/users/saved-snippets.ts";

/** GET /saved_snippets. */
export const getSavedSnippets: Handler<"get-saved-snippets"> = async (_req, ctx) => ({
  saved_snippets: await savedSnippetDicts(ctx.db, ctx.user.id),
});

/** POST /saved_snippets: title checked before content, as the view's parameters are. */
export const createSavedSnippet: Handler<"create-saved-snippet"> = async ({ body }, ctx) => {
  const title = checkSnippetText("title", body.title);
  const content = checkSnippetText("content", body.content);
  return { saved_snippet_id: await doCreateSavedSnippet(ctx, title, content) };
};

/** PATCH /saved_snippets/{saved_snippet_id}: with neither field, success and no event. */
export const editSavedSnippet: Handler<"edit-saved-snippet"> = async ({ path, body }, ctx) => {
  const title = body?.title === undefined ? undefined : checkSnippetText("title", body.title);
  const content =
    body?.content === undefined ? undefined : checkSnippetText("content", body.content);
  if (title === undefined && content === undefined) return {};
  await doEditSavedSnippet(ctx, path.saved_snippet_id, {
    ...(title === undefined ? {} : { title }),
    ...(content === undefined ? {} : { content }),
  });
  return {};
};

/** DELETE /saved_snippets/{saved_snippet_id}. */
export const deleteSavedSnippet: Handler<"delete-saved-snippet"> = async ({ path }, ctx) => {
  await doDeleteSavedSnippet(ctx, path.saved_snippet_id);
  return {};
};
