/**
 * Adding and removing code playgrounds (zerver/actions/realm_playgrounds.py), administrators
 * only: each change sends everyone in the organization a `realm_playgrounds` event with the
 * whole new list, in its transaction.
 */
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { isStorableId } from "../../lib/ids.ts";
import { requireRealmAdmin } from "../../lib/users/users.ts";
import {
  PLAYGROUND_EXISTS,
  checkPlayground,
  invalidPlayground,
  realmPlaygrounds,
} from "../../lib/realm/playgrounds.ts";
import { activeUserIds } from "../../lib/users/users.ts";
import { inTransaction } from "../transaction.ts";

/** notify_realm_playgrounds. */
async function notify(ctx: RequestContext, { tx, events }: UnitOfWork) {
  events.add(
    { type: "realm_playgrounds", realm_playgrounds: await realmPlaygrounds(tx, ctx.realm.id) },
    await activeUserIds(tx, ctx.realm.id),
  );
}

/** check_add_realm_playground: fields stripped, full_clean, then saved. */
export async function doAddRealmPlayground(
  ctx: RequestContext,
  raw: { name: string; pygmentsLanguage: string; urlTemplate: string },
): Promise<number> {
  const input = {
    name: raw.name.trim(),
    pygmentsLanguage: raw.pygmentsLanguage.trim(),
    urlTemplate: raw.urlTemplate.trim(),
  };
  checkPlayground(input);
  return inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const same = await tx.realmPlayground.findFirst({
      where: { realmId: ctx.realm.id, name: input.name, pygmentsLanguage: input.pygmentsLanguage },
      select: { id: true },
    });
    if (same) throw new JsonableError(PLAYGROUND_EXISTS);
    const row = await tx.realmPlayground.create({ data: { realmId: ctx.realm.id, ...input } });
    await notify(ctx, { tx, events });
    return row.id;
  });
}

/** access_playground_by_id, then do_remove_realm_playground. */
export async function doRemoveRealmPlayground(ctx: RequestContext, id: number): Promise<void> {
  requireRealmAdmin(ctx.user);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const { count } = isStorableId(id)
      ? await tx.realmPlayground.deleteMany({ where: { id, realmId: ctx.realm.id } })
      : { count: 0 };
    if (count === 0) throw invalidPlayground();
    await notify(ctx, { tx, events });
  });
}
