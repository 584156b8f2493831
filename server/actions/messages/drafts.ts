/**
 * Creating, editing and deleting drafts (zerver/actions/drafts.py): one transaction each, with
 * its `drafts` event to the user's clients.
 */
import type { RequestContext } from "../../context.ts";
import type { Tx } from "../../db/index.ts";
import { accessChannel } from "../../lib/channels/channels.ts";
import {
  checkDraftFields,
  draftDoesNotExist,
  type DraftDict,
  type DraftInput,
} from "../../lib/messages/drafts.ts";
import { isStorableId } from "../../lib/ids.ts";
import { RecipientType } from "../../lib/recipients.ts";
import { unixSeconds } from "../../lib/time.ts";
import { directRecipient, resolveDirectRecipients } from "./messages.ts";
import { inTransaction } from "../transaction.ts";

/** A draft checked (further_validated_draft_dict) and ready to store, with its API form. */
async function checkDraft(ctx: RequestContext, tx: Tx, draft: DraftInput) {
  const { content, topic, lastEditTime } = checkDraftFields(draft, ctx.now());
  let recipientId: number | null = null;
  let type = draft.type;
  let to: number[] = [];
  if (draft.type === "stream") {
    const channel = await accessChannel(tx, ctx.user, { id: draft.to[0]! });
    recipientId = channel.recipientId;
    to = [channel.id];
  } else if (draft.type === "private" && draft.to.length > 0) {
    const checker = { ...ctx, db: tx };
    const others = await resolveDirectRecipients(checker, { kind: "direct", userIds: draft.to });
    const recipient = await directRecipient(tx, ctx.realm.id, ctx.user, others);
    recipientId = recipient.recipientId;
    to =
      recipient.recipientType === RecipientType.PERSONAL
        ? [recipient.recipientTypeId]
        : recipient.memberIds.filter((id) => id !== ctx.user.id);
  } else {
    // A direct-message draft to nobody is an unaddressed draft.
    type = "";
  }
  const row = { recipientId, topic, content, lastEditTime };
  const dict = (id: number): DraftDict => ({
    id,
    type,
    to,
    topic,
    content,
    timestamp: unixSeconds(lastEditTime),
  });
  return { row, dict };
}

/** do_create_drafts: every draft checked before any is stored; one `drafts` add event. */
export async function doCreateDrafts(ctx: RequestContext, drafts: DraftInput[]): Promise<number[]> {
  return inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const checked = [];
    for (const draft of drafts) checked.push(await checkDraft(ctx, tx, draft));
    const created = await tx.draft.createManyAndReturn({
      data: checked.map(({ row }) => ({
        realmId: ctx.realm.id,
        userProfileId: ctx.user.id,
        ...row,
      })),
      select: { id: true },
    });
    // createManyAndReturn gives the rows in the order of `data` (one INSERT … RETURNING).
    const ids = created.map((c) => c.id);
    events.add({ type: "drafts", op: "add", drafts: checked.map(({ dict }, i) => dict(ids[i]!)) }, [
      ctx.user.id,
    ]);
    return ids;
  });
}

/** do_edit_draft: the caller's own draft only ("Draft does not exist" before any check). */
export async function doEditDraft(ctx: RequestContext, draftId: number, draft: DraftInput) {
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    if (!isStorableId(draftId)) throw draftDoesNotExist();
    const existing = await tx.draft.findFirst({
      where: { id: draftId, userProfileId: ctx.user.id },
      select: { id: true },
    });
    if (!existing) throw draftDoesNotExist();
    const { row, dict } = await checkDraft(ctx, tx, draft);
    await tx.draft.update({ where: { id: draftId }, data: row });
    events.add({ type: "drafts", op: "update", draft: dict(draftId) }, [ctx.user.id]);
  });
}

/** do_delete_draft. */
export async function doDeleteDraft(ctx: RequestContext, draftId: number) {
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    if (!isStorableId(draftId)) throw draftDoesNotExist();
    const { count } = await tx.draft.deleteMany({
      where: { id: draftId, userProfileId: ctx.user.id },
    });
    if (count === 0) throw draftDoesNotExist();
    events.add({ type: "drafts", op: "remove", draft_id: draftId }, [ctx.user.id]);
  });
}
