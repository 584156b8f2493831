/** Drafts (zerver/views/drafts.py): every operation needs the user's draft synchronization on. */
import { doCreateDrafts, doDeleteDraft, doEditDraft } from "../actions/messages/drafts.ts";
import type { Handler } from "../http/types.ts";
import { checkDraftsSynchronized, draftDicts } from "../lib/messages/drafts.ts";

/** GET /drafts: oldest edit first. */
export const getDrafts: Handler<"get-drafts"> = async (_req, ctx) => {
  checkDraftsSynchronized(ctx.user);
  const drafts = await draftDicts(ctx.db, ctx.user.id, "oldest");
  return { count: drafts.length, drafts };
};

/** POST /drafts: several at once, all or none. */
export const createDrafts: Handler<"create-drafts"> = async ({ body }, ctx) => {
  checkDraftsSynchronized(ctx.user);
  return { ids: await doCreateDrafts(ctx, body.drafts) };
};

/** PATCH /drafts/{draft_id}. */
export const editDraft: Handler<"edit-draft"> = async ({ path, body }, ctx) => {
  checkDraftsSynchronized(ctx.user);
  await doEditDraft(ctx, path.draft_id, body.draft);
  return {};
};

/** DELETE /drafts/{draft_id}. */
export const deleteDraft: Handler<"delete-draft"> = async ({ path }, ctx) => {
  checkDraftsSynchronized(ctx.user);
  await doDeleteDraft(ctx, path.draft_id);
  return {};
};
