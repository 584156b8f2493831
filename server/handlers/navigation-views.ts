/** Navigation views (zerver/views/navigation_views.py). */
import {
  doAddNavigationView,
  doRemoveNavigationView,
  doUpdateNavigationView,
} from "../actions/users/navigation-views.ts";
import type { Handler } from "../http/types.ts";
import { checkViewText, navigationViewDicts } from "../lib/users/navigation-views.ts";

/** GET /navigation_views. */
export const getNavigationViews: Handler<"get-navigation-views"> = async (_req, ctx) => ({
  navigation_views: await navigationViewDicts(ctx.db, ctx.user.id),
});

/** POST /navigation_views: fragment checked before name, as the view's parameters are. */
export const addNavigationView: Handler<"add-navigation-view"> = async ({ body }, ctx) => {
  const fragment = checkViewText("fragment", body.fragment);
  const name = body.name === undefined ? undefined : checkViewText("name", body.name);
  await doAddNavigationView(ctx, fragment, body.is_pinned, name);
  return {};
};

/** PATCH /navigation_views/{fragment}. */
export const editNavigationView: Handler<"edit-navigation-view"> = async ({ path, body }, ctx) => {
  const fragment = checkViewText("fragment", path.fragment);
  const name = body?.name === undefined ? undefined : checkViewText("name", body.name);
  await doUpdateNavigationView(ctx, fragment, {
    ...(body?.is_pinned === undefined ? {} : { isPinned: body.is_pinned }),
    ...(name === undefined ? {} : { name }),
  });
  return {};
};

/** DELETE /navigation_views/{fragment}. */
export const removeNavigationView: Handler<"remove-navigation-view"> = async ({ path }, ctx) => {
  await doRemoveNavigationView(ctx, checkViewText("fragment", path.fragment));
  return {};
};
