/**
 * Adding, updating and removing navigation views (zerver/actions/navigation_views.py), with the
 * view's checks in Zulip's order: one transaction each, its `navigation_view` event to the
 * user's clients.
 */
import type { RequestContext } from "../../context.ts";
import { Prisma, type Tx } from "../../db/index.ts";
import {
  builtInViewNamed,
  customViewUnnamed,
  isBuiltInView,
  navigationViewDict,
  navigationViewDoesNotExist,
  navigationViewExists,
} from "../../lib/users/navigation-views.ts";
import { inTransaction } from "../transaction.ts";

async function nameTaken(tx: Tx, userId: number, name: string | undefined) {
  if (name === undefined) return false;
  const row = await tx.navigationView.findFirst({
    where: { userProfileId: userId, name },
    select: { id: true },
  });
  return row !== null;
}

/** The unique (user, fragment) and (user, name) indexes refusing what a concurrent request took. */
async function unique<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002")
      throw navigationViewExists();
    throw e;
  }
}

/** add_navigation_view + do_add_navigation_view: fragment and name already stripped. */
export async function doAddNavigationView(
  ctx: RequestContext,
  fragment: string,
  isPinned: boolean,
  name: string | undefined,
) {
  if (isBuiltInView(fragment)) {
    if (name !== undefined) throw builtInViewNamed();
  } else if (name === undefined) throw customViewUnnamed();
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const userProfileId = ctx.user.id;
    const same = await tx.navigationView.findFirst({
      where: { userProfileId, fragment },
      select: { id: true },
    });
    if (same || (await nameTaken(tx, userProfileId, name))) throw navigationViewExists();
    const row = await unique(
      tx.navigationView.create({
        data: { realmId: ctx.realm.id, userProfileId, fragment, isPinned, name: name ?? null },
        select: { fragment: true, isPinned: true, name: true },
      }),
    );
    events.add({ type: "navigation_view", op: "add", navigation_view: navigationViewDict(row) }, [
      userProfileId,
    ]);
  });
}

/**
 * update_navigation_view + do_update_navigation_view: a name for a built-in view, then a name
 * taken (by any of the user's views, this one included), then a missing view. `data` holds
 * the fields given, possibly none.
 */
export async function doUpdateNavigationView(
  ctx: RequestContext,
  fragment: string,
  changes: { isPinned?: boolean; name?: string },
) {
  if (isBuiltInView(fragment) && changes.name !== undefined) throw builtInViewNamed();
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const userProfileId = ctx.user.id;
    if (await nameTaken(tx, userProfileId, changes.name)) throw navigationViewExists();
    const where = { userProfileId, fragment };
    // Prisma answers an update with no field as a count of 0 without running it.
    const count =
      Object.keys(changes).length === 0
        ? await tx.navigationView.count({ where })
        : (await unique(tx.navigationView.updateMany({ where, data: changes }))).count;
    if (count === 0) throw navigationViewDoesNotExist();
    const data = {
      ...(changes.name === undefined ? {} : { name: changes.name }),
      ...(changes.isPinned === undefined ? {} : { is_pinned: changes.isPinned }),
    };
    events.add({ type: "navigation_view", op: "update", fragment, data }, [userProfileId]);
  });
}

/** do_remove_navigation_view. */
export async function doRemoveNavigationView(ctx: RequestContext, fragment: string) {
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const { count } = await tx.navigationView.deleteMany({
      where: { userProfileId: ctx.user.id, fragment },
    });
    if (count === 0) throw navigationViewDoesNotExist();
    events.add({ type: "navigation_view", op: "remove", fragment }, [ctx.user.id]);
  });
}
