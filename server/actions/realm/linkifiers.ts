/**
 * Adding, changing, removing and reordering linkifiers (zerver/actions/realm_linkifiers.py),
 * administrators only. Each change sends everyone in the organization a `realm_linkifiers`
 * event with the whole new list, and drops every process's cached list (`linkifiers:<realm>`).
 */
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import {
  checkLinkifier,
  optionalText,
  realmLinkifiers,
  type ReverseFields,
} from "../../lib/realm/linkifiers.ts";
import { isStorableId } from "../../lib/ids.ts";
import { refuseNul } from "../../lib/text.ts";
import { activeUserIds, requireRealmAdmin } from "../../lib/users/users.ts";
import type { Tx } from "../../db/index.ts";
import { inTransaction } from "../transaction.ts";
import type { UnitOfWork } from "../../events/index.ts";

/** notify_linkifiers: the list as it is now, to every active user; the caches dropped. */
async function notify(ctx: RequestContext, { tx, events }: UnitOfWork) {
  events.invalidate(`linkifiers:${ctx.realm.id}`);
  events.add(
    { type: "realm_linkifiers", realm_linkifiers: await realmLinkifiers(tx, ctx.realm.id) },
    await activeUserIds(tx, ctx.realm.id),
  );
}

/** What POST and PATCH send; left out on PATCH, a reverse-linkification field is kept. */
export interface LinkifierInput {
  pattern: string;
  urlTemplate: string;
  exampleInput?: string;
  reverseTemplate?: string;
  alternativeUrlTemplates?: string[];
}

type Checked = { pattern: string; urlTemplate: string } & ReverseFields;

/** The values to store: stripped, empty text as null, and what PATCH left out as it was. */
function normalized(raw: LinkifierInput, before?: ReverseFields): Checked {
  return {
    pattern: raw.pattern.trim(),
    urlTemplate: raw.urlTemplate.trim(),
    exampleInput:
      raw.exampleInput === undefined
        ? (before?.exampleInput ?? null)
        : optionalText(raw.exampleInput),
    reverseTemplate:
      raw.reverseTemplate === undefined
        ? (before?.reverseTemplate ?? null)
        : optionalText(raw.reverseTemplate),
    alternativeUrlTemplates:
      raw.alternativeUrlTemplates?.map((t) => t.trim()) ?? before?.alternativeUrlTemplates ?? [],
  };
}

/** full_clean's checks, then validate_unique (the pattern, within the organization). */
async function check(ctx: RequestContext, tx: Tx, input: Checked, exceptId?: number) {
  checkLinkifier(input.pattern, input.urlTemplate, input);
  // PostgreSQL cannot store a NUL (Zulip's database would fail too): refused as in names.
  refuseNul(input.pattern, "linkifier pattern");
  for (const text of [input.exampleInput, input.reverseTemplate, ...input.alternativeUrlTemplates])
    if (text !== null) refuseNul(text, "linkifier");
  const same = await tx.realmFilter.findFirst({
    where: { realmId: ctx.realm.id, pattern: input.pattern, NOT: { id: exceptId } },
    select: { id: true },
  });
  if (same) throw new JsonableError("Realm filter with this Realm and Pattern already exists.");
}

/** do_add_linkifier: stripped, last in the order. */
export async function doAddLinkifier(ctx: RequestContext, raw: LinkifierInput): Promise<number> {
  requireRealmAdmin(ctx.user);
  const input = normalized(raw);
  return inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    await check(ctx, tx, input);
    const last = await tx.realmFilter.aggregate({
      where: { realmId: ctx.realm.id },
      _max: { order: true },
    });
    const row = await tx.realmFilter.create({
      data: {
        realmId: ctx.realm.id,
        pattern: input.pattern,
        urlTemplate: input.urlTemplate,
        exampleInput: input.exampleInput,
        reverseTemplate: input.reverseTemplate,
        alternativeUrlTemplates: input.alternativeUrlTemplates,
        order: last._max.order === null ? 0 : last._max.order + 1,
      },
    });
    await notify(ctx, { tx, events });
    return row.id;
  });
}

async function findLinkifier(ctx: RequestContext, tx: Tx, id: number) {
  const row = isStorableId(id)
    ? await tx.realmFilter.findFirst({ where: { id, realmId: ctx.realm.id } })
    : null;
  if (!row) throw new JsonableError("Linkifier not found.");
  return row;
}

/** do_update_linkifier: pattern and template replaced, the position kept. */
export async function doUpdateLinkifier(
  ctx: RequestContext,
  id: number,
  raw: LinkifierInput,
): Promise<void> {
  requireRealmAdmin(ctx.user);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const input = normalized(raw, await findLinkifier(ctx, tx, id));
    await check(ctx, tx, input, id);
    await tx.realmFilter.update({ where: { id }, data: input });
    await notify(ctx, { tx, events });
  });
}

/** do_remove_linkifier. */
export async function doRemoveLinkifier(ctx: RequestContext, id: number): Promise<void> {
  requireRealmAdmin(ctx.user);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    await findLinkifier(ctx, tx, id);
    await tx.realmFilter.delete({ where: { id } });
    await notify(ctx, { tx, events });
  });
}

/** check_reorder_linkifiers: every linkifier exactly once; nothing to do for none. */
export async function doReorderLinkifiers(ctx: RequestContext, ids: number[]): Promise<void> {
  requireRealmAdmin(ctx.user);
  if (new Set(ids).size < ids.length)
    throw new JsonableError("The ordered list must not contain duplicated linkifiers");
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const rows = await tx.realmFilter.findMany({
      where: { realmId: ctx.realm.id },
      select: { id: true },
    });
    const existing = new Set(rows.map((r) => r.id));
    if (existing.size !== ids.length || ids.some((id) => !existing.has(id)))
      throw new JsonableError(
        "The ordered list must enumerate all existing linkifiers exactly once",
      );
    if (rows.length === 0) return;
    // One statement for the whole order.
    await tx.$executeRaw`UPDATE realm_filter f SET "order" = o.ord - 1
      FROM unnest(${ids}::int[]) WITH ORDINALITY AS o(id, ord)
      WHERE f.id = o.id AND f.realm_id = ${ctx.realm.id}`;
    await notify(ctx, { tx, events });
  });
}
