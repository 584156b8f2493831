/**
 * Code playgrounds (zerver/models/realm_playgrounds.py, zerver/views/realm_playgrounds.py): the
 * list as the API gives it, and Zulip's checks on a new one with their texts.
 */
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { isValidUrlTemplate, templateVariables } from "../markdown/linkifiers.ts";
import { refuseNul } from "../text.ts";

/** RealmPlayground.MAX_PYGMENTS_LANGUAGE_LENGTH. */
const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;
/** check_pygments_language's pattern (spaces are stripped, then refused by the model's). */
const VIEW_LANGUAGE_RE = /^[ a-zA-Z0-9_+-./#]*$/;
/** FENCED_CODE_LANGUAGE_REGEX, the characters a code block's language may have. */
const MODEL_LANGUAGE_RE = /^[a-zA-Z0-9_+-./#]+$/;
const BLANK = "This field cannot be blank.";

export interface PlaygroundDict {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

/** get_realm_playgrounds: register's `realm_playgrounds` and the event's list. */
export async function realmPlaygrounds(db: Db, realmId: number): Promise<PlaygroundDict[]> {
  const rows = await db.realmPlayground.findMany({ where: { realmId }, orderBy: { id: "asc" } });
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    pygments_language: r.pygmentsLanguage,
    url_template: r.urlTemplate,
  }));
}

/** check_pygments_language (the view's parameter check, before anything is stripped). */
export function checkPygmentsLanguage(value: string): string {
  if ([...value].length > MAX_PYGMENTS_LANGUAGE_LENGTH)
    throw new JsonableError(
      `pygments_language is too long (limit: ${MAX_PYGMENTS_LANGUAGE_LENGTH} characters)`,
    );
  if (!VIEW_LANGUAGE_RE.test(value))
    throw new JsonableError("Invalid characters in pygments language");
  return value;
}

/**
 * RealmPlayground.full_clean on stripped fields: the field checks in the model's field order
 * (url_template, name, pygments_language), the first one failing answering as Zulip's
 * ValidationFailureError does, then clean()'s check of the template's variables (skipped for
 * an invalid template). Uniqueness is the action's, in its transaction.
 */
export function checkPlayground(input: {
  name: string;
  pygmentsLanguage: string;
  urlTemplate: string;
}): void {
  const validTemplate = isValidUrlTemplate(input.urlTemplate);
  if (!validTemplate) throw new JsonableError("Invalid URL template.");
  if (input.name === "") throw new JsonableError(BLANK);
  if (input.pygmentsLanguage === "") throw new JsonableError(BLANK);
  if (!MODEL_LANGUAGE_RE.test(input.pygmentsLanguage))
    throw new JsonableError("Invalid characters in pygments language");
  const variables = templateVariables(input.urlTemplate);
  if (!variables.has("code"))
    throw new JsonableError('Missing the required variable "code" in the URL template');
  if (variables.size !== 1)
    throw new JsonableError('"code" should be the only variable present in the URL template');
  // PostgreSQL cannot store a NUL (Zulip's database would fail too).
  refuseNul(input.name, "name");
  refuseNul(input.urlTemplate, "url_template");
}

export const PLAYGROUND_EXISTS =
  "Realm playground with this Realm, Pygments language and Name already exists.";
export const invalidPlayground = () => new JsonableError("Invalid playground");
