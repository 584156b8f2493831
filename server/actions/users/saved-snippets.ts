/**
 * Creating, editing and deleting saved snippets (zerver/actions/saved_snippets.py): one
 * transaction each, with its `saved_snippets` event to the user's clients.
 */
import type { RequestContext } from "../../context.ts";
import { isStorableId } from "../../lib/ids.ts";
import { savedSnippetDoesNotExist, snippetDict } from "../../lib/users/saved-snippets.ts";
import { inTransaction } from "../transaction.ts";

const SELECT = { id: true, title: true, content: true, dateCreated: true } as const;

/** do_create_saved_snippet: title and content already checked. */
export async function doCreateSavedSnippet(
  ctx: RequestContext,
  title: string,
  content: string,
): Promise<number> {
  return inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const row = await tx.savedSnippet.create({
      data: {
        realmId: ctx.realm.id,
        userProfileId: ctx.user.id,
        title,
        content,
        dateCreated: ctx.now(),
      },
      select: SELECT,
    });
    events.add({ type: "saved_snippets", op: "add", saved_snippet: snippetDict(row) }, [
      ctx.user.id,
    ]);
    return row.id;
  });
}

/** do_edit_saved_snippet: the caller's own snippet only; a field left out keeps its value. */
export async function doEditSavedSnippet(
  ctx: RequestContext,
  snippetId: number,
  changes: { title?: string; content?: string },
) {
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    if (!isStorableId(snippetId)) throw savedSnippetDoesNotExist();
    const { count } = await tx.savedSnippet.updateMany({
      where: { id: snippetId, userProfileId: ctx.user.id },
      data: changes,
    });
    if (count === 0) throw savedSnippetDoesNotExist();
    const row = await tx.savedSnippet.findUniqueOrThrow({
      where: { id: snippetId },
      select: SELECT,
    });
    events.add({ type: "saved_snippets", op: "update", saved_snippet: snippetDict(row) }, [
      ctx.user.id,
    ]);
  });
}

/** do_delete_saved_snippet. */
export async function doDeleteSavedSnippet(ctx: RequestContext, snippetId: number) {
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    if (!isStorableId(snippetId)) throw savedSnippetDoesNotExist();
    const { count } = await tx.savedSnippet.deleteMany({
      where: { id: snippetId, userProfileId: ctx.user.id },
    });
    if (count === 0) throw savedSnippetDoesNotExist();
    events.add({ type: "saved_snippets", op: "remove", saved_snippet_id: snippetId }, [
      ctx.user.id,
    ]);
  });
}
