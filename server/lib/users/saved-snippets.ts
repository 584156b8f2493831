/**
 * Saved snippets (zerver/models/saved_snippets.py, zerver/views/saved_snippets.py): reading them
 * as SavedSnippet.to_api_dict gives them, and the checks on a title or a content.
 */
import type { Db } from "../../db/index.ts";
import { JsonableError, ResourceNotFoundError } from "../../errors.ts";
import { MAX_MESSAGE_LENGTH } from "../messages/topics.ts";
import { refuseNul } from "../text.ts";
import { unixSeconds } from "../time.ts";

/** SavedSnippet.MAX_TITLE_LENGTH. */
export const MAX_SNIPPET_TITLE_LENGTH = 60;

/** A saved snippet as the API gives it. */
export interface SavedSnippetDict {
  id: number;
  title: string;
  content: string;
  date_created: number;
}

interface SnippetRow {
  id: number;
  title: string;
  content: string;
  dateCreated: Date;
}

export const snippetDict = (r: SnippetRow): SavedSnippetDict => ({
  id: r.id,
  title: r.title,
  content: r.content,
  date_created: unixSeconds(r.dateCreated),
});

/** The user's saved snippets, oldest first (GET /saved_snippets and register). */
export async function savedSnippetDicts(db: Db, userId: number): Promise<SavedSnippetDict[]> {
  const rows = await db.savedSnippet.findMany({
    where: { userProfileId: userId },
    orderBy: { id: "asc" },
    select: { id: true, title: true, content: true, dateCreated: true },
  });
  return rows.map(snippetDict);
}

/**
 * StringConstraints(min_length=1, max_length=…, strip_whitespace=True): the value is stripped
 * before its length is checked, so whitespace alone is blank. Length counts code points as
 * Python's str does. PostgreSQL cannot hold NUL, so that is refused too.
 */
export function checkSnippetText(name: "title" | "content", value: string): string {
  const text = value.trim();
  if (text.length === 0) throw new JsonableError(`${name} cannot be blank`);
  const limit = name === "title" ? MAX_SNIPPET_TITLE_LENGTH : MAX_MESSAGE_LENGTH;
  if ([...text].length > limit)
    throw new JsonableError(`${name} is too long (limit: ${limit} characters)`);
  return refuseNul(text, name);
}

export const savedSnippetDoesNotExist = () =>
  new ResourceNotFoundError("Saved snippet does not exist.");
