/**
 * Navigation views (zerver/lib/navigation_views.py, zerver/views/navigation_views.py): reading
 * them as NavigationView.to_api_dict gives them, and the view's checks on a fragment or a name.
 */
import type { Db } from "../../db/index.ts";
import { JsonableError, ResourceNotFoundError } from "../../errors.ts";
import { refuseNul } from "../text.ts";

/** BUILT_IN_VIEW_FRAGMENTS: these take no name; any other fragment is a custom view. */
export const BUILT_IN_VIEW_FRAGMENTS: readonly string[] = [
  "inbox",
  "recent",
  "feed",
  "drafts",
  "narrow/has/reaction/sender/me",
  "narrow/is/mentioned",
  "narrow/is/starred",
];

export interface NavigationViewDict {
  fragment: string;
  is_pinned: boolean;
  name: string | null;
}

interface ViewRow {
  fragment: string;
  isPinned: boolean;
  name: string | null;
}

export const navigationViewDict = (r: ViewRow): NavigationViewDict => ({
  fragment: r.fragment,
  is_pinned: r.isPinned,
  name: r.name,
});

/** The user's navigation views, oldest first (GET /navigation_views and register). */
export async function navigationViewDicts(db: Db, userId: number): Promise<NavigationViewDict[]> {
  const rows = await db.navigationView.findMany({
    where: { userProfileId: userId },
    orderBy: { id: "asc" },
    select: { fragment: true, isPinned: true, name: true },
  });
  return rows.map(navigationViewDict);
}

/**
 * StringConstraints(strip_whitespace=True, min_length=1): stripped, then refused when empty.
 * PostgreSQL cannot hold NUL, so that is refused too.
 */
export function checkViewText(name: "fragment" | "name", value: string): string {
  const text = value.trim();
  if (text.length === 0) throw new JsonableError(`${name} cannot be blank`);
  return refuseNul(text, name);
}

export const isBuiltInView = (fragment: string) => BUILT_IN_VIEW_FRAGMENTS.includes(fragment);

export const builtInViewNamed = () =>
  new JsonableError("Built-in views cannot have a custom name.");
export const customViewUnnamed = () => new JsonableError("Custom views must have a valid name.");
export const navigationViewExists = () => new JsonableError("Navigation view already exists.");
export const navigationViewDoesNotExist = () =>
  new ResourceNotFoundError("Navigation view does not exist.");
