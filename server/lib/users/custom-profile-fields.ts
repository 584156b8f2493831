/**
 * Custom profile fields (zerver/models/custom_profile_fields.py, zerver/views/custom_profile_fields.py,
 * zerver/lib/external_accounts.py, the validators of zerver/lib/validator.py): the field types,
 * the checks of a field's definition and of a user's value, and the reads.
 */
import type { CustomProfileField, Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { isStorableId } from "../ids.ts";
import type { Schemas } from "../schemas.ts";
import { refuseNul } from "../text.ts";

export const FieldType = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const;

/** CustomProfileField.ALL_FIELD_TYPES: keyword, id and display name (register's custom_profile_field_types). */
const FIELD_TYPES: [keyof typeof FieldType, string][] = [
  ["SHORT_TEXT", "Short text"],
  ["LONG_TEXT", "Paragraph"],
  ["SELECT", "Dropdown"],
  ["DATE", "Date"],
  ["URL", "Link"],
  ["USER", "Users"],
  ["EXTERNAL_ACCOUNT", "External account"],
  ["PRONOUNS", "Pronouns"],
];

export const customProfileFieldTypes = () =>
  Object.fromEntries(FIELD_TYPES.map(([key, name]) => [key, { id: FieldType[key], name }]));

const isFieldType = (t: number) => FIELD_TYPES.some(([key]) => FieldType[key] === t);

/** Values rendered as Markdown (CustomProfileField.is_renderable). */
export const isRenderable = (fieldType: number) =>
  fieldType === FieldType.SHORT_TEXT || fieldType === FieldType.LONG_TEXT;

/** DEFAULT_EXTERNAL_ACCOUNTS: a field of these subtypes takes its label from here. */
export const DEFAULT_EXTERNAL_ACCOUNTS: Record<
  string,
  { text: string; urlPattern: string; name: string; hint: string }
> = {
  twitter: {
    text: "Twitter",
    urlPattern: "https://twitter.com/%(username)s",
    name: "Twitter username",
    hint: "",
  },
  github: {
    text: "GitHub",
    urlPattern: "https://github.com/%(username)s",
    name: "GitHub username",
    hint: "",
  },
};

export const NAME_MAX_LENGTH = 40;
export const HINT_MAX_LENGTH = 80;
export const MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS = 2;
/** check_short_string / check_long_string. */
const SHORT_TEXT_MAX_LENGTH = 50;
const LONG_TEXT_MAX_LENGTH = 500;

export type FieldData = Record<string, unknown>;
export type ApiCustomProfileField = Schemas["CustomProfileField"];

/** Python's len(): code points. */
const length = (s: string) => [...s].length;

function checkCappedString(varName: string, value: unknown, max: number): string {
  if (typeof value !== "string") throw new JsonableError(`${varName} is not a string`);
  if (length(value) > max)
    throw new JsonableError(`${varName} is too long (limit: ${max} characters)`);
  return value;
}

function checkRequiredString(varName: string, value: unknown): string {
  if (typeof value !== "string") throw new JsonableError(`${varName} is not a string`);
  if (!value.trim()) throw new JsonableError(`${varName} cannot be blank.`);
  return value;
}

/** check_dict_only: the required keys (in order), the optional ones, nothing else. */
function checkDictOnly(
  varName: string,
  value: unknown,
  required: [string, (name: string, v: unknown) => unknown][],
  optional: [string, (name: string, v: unknown) => unknown][] = [],
): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new JsonableError(`${varName} is not a dict`);
  const dict = value as Record<string, unknown>;
  for (const [key, check] of required) {
    if (!(key in dict)) throw new JsonableError(`${key} key is missing from ${varName}`);
    check(`${varName}["${key}"]`, dict[key]);
  }
  for (const [key, check] of optional) if (key in dict) check(`${varName}["${key}"]`, dict[key]);
  const known = new Set([...required, ...optional].map(([key]) => key));
  const extra = Object.keys(dict).filter((k) => !known.has(k));
  if (extra.length) throw new JsonableError(`Unexpected arguments: ${extra.join(", ")}`);
  return dict;
}

/**
 * Django's URLValidator (what Zulip's check_url uses): http(s) or ftp(s), a host that is an IPv4
 * or bracketed IPv6 address, `localhost` or a name with a top-level domain, an optional port, and
 * no whitespace. Written out because the project must refuse exactly what Zulip refuses.
 */
const UL = "\u00a1-\uffff";
const IPV4 =
  "(?:0|25[0-5]|2[0-4][0-9]|1[0-9]?[0-9]?|[1-9][0-9]?)(?:\\.(?:0|25[0-5]|2[0-4][0-9]|1[0-9]?[0-9]?|[1-9][0-9]?)){3}";
const IPV6 = "\\[[0-9a-f:.]+\\]";
const HOSTNAME = `[a-z${UL}0-9](?:[a-z${UL}0-9-]{0,61}[a-z${UL}0-9])?`;
const DOMAIN = `(?:\\.(?!-)[a-z${UL}0-9-]{1,63}(?<!-))*`;
const TLD = `\\.(?!-)(?:[a-z${UL}-]{2,63}|xn--[a-z0-9]{1,59})(?<!-)\\.?`;
const URL_RE = new RegExp(
  `^(?:[a-z0-9.+-]*)://(?:[^\\s:@/]+(?::[^\\s:@/]*)?@)?(?:${IPV4}|${IPV6}|(?:${HOSTNAME}${DOMAIN}${TLD}|localhost))(?::[0-9]{1,5})?(?:[/?#][^\\s]*)?$`,
  "i",
);
const URL_SCHEMES = ["http", "https", "ftp", "ftps"];

export function isUrl(value: string): boolean {
  if (value.length > 2048 || /[\t\r\n]/.test(value)) return false;
  const scheme = value.split("://")[0]!.toLowerCase();
  return URL_SCHEMES.includes(scheme) && URL_RE.test(value);
}

function checkUrl(varName: string, value: unknown): string {
  if (typeof value !== "string") throw new JsonableError(`${varName} is not a string`);
  if (!isUrl(value)) throw new JsonableError(`${varName} is not a URL`);
  return value;
}

/** check_date: exactly what Python's date.fromisoformat(v).isoformat() gives back. */
function checkDate(varName: string, value: unknown): string {
  if (typeof value !== "string") throw new JsonableError(`${varName} is not a string`);
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (
    !m ||
    Number(m[1]) < 1 ||
    date!.getUTCMonth() !== Number(m[2]) - 1 ||
    date!.getUTCDate() !== Number(m[3])
  )
    throw new JsonableError(`${varName} is not a date`);
  return value;
}

function checkUrlPattern(varName: string, value: unknown): string {
  if (typeof value !== "string") throw new JsonableError(`${varName} is not a string`);
  if (value.split("%(username)s").length !== 2)
    throw new JsonableError("URL pattern must contain '%(username)s'.");
  checkUrl(varName, value.replace("%(username)s", "username"));
  return value;
}

/** validate_select_field_data: non-blank keys, `text` and `order` strings, distinct texts. */
function checkSelectFieldData(fieldData: FieldData) {
  if (Object.keys(fieldData).length < 1)
    throw new JsonableError("Field must have at least one choice.");
  const texts = new Set<string>();
  for (const [key, value] of Object.entries(fieldData)) {
    if (!key.trim()) throw new JsonableError("'value' cannot be blank.");
    const choice = checkDictOnly("field_data", value, [
      ["text", checkRequiredString],
      ["order", checkRequiredString],
    ]);
    texts.add(choice.text as string);
  }
  if (texts.size !== Object.keys(fieldData).length)
    throw new JsonableError("Field must not have duplicate choices.");
}

/** validate_external_account_field_data. */
function checkExternalAccountFieldData(fieldData: FieldData) {
  checkDictOnly(
    "field_data",
    fieldData,
    [["subtype", checkRequiredString]],
    [["url_pattern", checkUrlPattern]],
  );
  const subtype = fieldData.subtype as string;
  if (!(subtype in DEFAULT_EXTERNAL_ACCOUNTS)) {
    if (subtype !== "custom") throw new JsonableError("Invalid external account type");
    if (!("url_pattern" in fieldData))
      throw new JsonableError("Custom external account must define URL pattern");
  }
}

/** A github/twitter field: its name and hint come from DEFAULT_EXTERNAL_ACCOUNTS (is_default_external_field). */
export function defaultExternalSubtype(fieldType: number, fieldData: FieldData): string | null {
  if (fieldType !== FieldType.EXTERNAL_ACCOUNT) return null;
  const subtype = fieldData.subtype;
  return typeof subtype === "string" && subtype in DEFAULT_EXTERNAL_ACCOUNTS ? subtype : null;
}

export interface FieldDefinition {
  name: string;
  hint: string;
  fieldType: number;
  fieldData: FieldData;
  displayInProfileSummary: boolean;
  useForUserMatching: boolean;
}

/**
 * validate_custom_profile_field, in Zulip's order: the field data, the label and hint (not for
 * github/twitter fields, whose label is the server's), the type, then the flags the type refuses.
 */
export function checkFieldDefinition(field: FieldDefinition) {
  if (field.fieldType === FieldType.SELECT) checkSelectFieldData(field.fieldData);
  else if (field.fieldType === FieldType.EXTERNAL_ACCOUNT)
    checkExternalAccountFieldData(field.fieldData);
  if (JSON.stringify(field.fieldData).includes("\\u0000"))
    throw new JsonableError("Invalid character in field_data.");
  if (!defaultExternalSubtype(field.fieldType, field.fieldData)) {
    if (!field.name.trim()) throw new JsonableError("Label cannot be blank.");
    checkCappedString("hint", field.hint, HINT_MAX_LENGTH);
    checkCappedString("name", field.name, NAME_MAX_LENGTH);
    refuseNul(field.name, "name");
    refuseNul(field.hint, "hint");
  }
  if (!isFieldType(field.fieldType)) throw new JsonableError("Invalid field type.");
  // Paragraph fields may be in the summary since feature level 476; Users fields still may not.
  if (field.displayInProfileSummary && field.fieldType === FieldType.USER)
    throw new JsonableError("Field type not supported for display in profile summary.");
  if (
    field.useForUserMatching &&
    field.fieldType !== FieldType.SHORT_TEXT &&
    field.fieldType !== FieldType.EXTERNAL_ACCOUNT
  )
    throw new JsonableError("Field type not supported for user matching.");
}

/** The stored field_data as the object it was given (`{}` for types without data). */
export const storedFieldData = (field: Pick<CustomProfileField, "fieldData">): FieldData =>
  (field.fieldData as FieldData | null) ?? {};

/** CustomProfileField.as_dict: field_data as JSON text, the two flags only when true. */
export function fieldDict(field: CustomProfileField): ApiCustomProfileField {
  const dict: ApiCustomProfileField = {
    id: field.id,
    name: field.name,
    type: field.fieldType,
    hint: field.hint,
    field_data: field.fieldData === null ? "" : JSON.stringify(field.fieldData),
    order: field.order,
    required: field.required,
    editable_by_user: field.editableByUser,
  };
  if (field.displayInProfileSummary) dict.display_in_profile_summary = true;
  if (field.useForUserMatching) dict.use_for_user_matching = true;
  return dict;
}

/** custom_profile_fields_for_realm: the organization's fields in display order. */
export async function realmFields(db: Db, realmId: number): Promise<ApiCustomProfileField[]> {
  const fields = await db.customProfileField.findMany({
    where: { realmId },
    orderBy: [{ order: "asc" }, { id: "asc" }],
  });
  return fields.map(fieldDict);
}

export const fieldNotFound = (id: number) => new JsonableError(`Field id ${id} not found.`);

/** A field of the organization by id, or "Field id N not found.". */
export async function accessField(db: Db, realmId: number, id: number) {
  const field = isStorableId(id)
    ? await db.customProfileField.findFirst({ where: { id, realmId } })
    : null;
  if (!field) throw fieldNotFound(id);
  return field;
}

/**
 * A user's new value for a field, as stored (validate_user_custom_profile_field): text checked
 * against its type, the field's name naming it in errors. Users fields are checked against the
 * organization's users by the caller (checkUserIds), set-based.
 */
export function checkFieldValue(field: CustomProfileField, value: unknown): string {
  const name = field.name;
  switch (field.fieldType) {
    case FieldType.SHORT_TEXT:
    case FieldType.EXTERNAL_ACCOUNT:
    case FieldType.PRONOUNS:
      return refuseNul(checkCappedString(name, value, SHORT_TEXT_MAX_LENGTH), name);
    case FieldType.LONG_TEXT:
      return refuseNul(checkCappedString(name, value, LONG_TEXT_MAX_LENGTH), name);
    case FieldType.DATE:
      return checkDate(name, value);
    case FieldType.URL:
      return checkUrl(name, value);
    case FieldType.SELECT: {
      if (typeof value !== "string") throw new JsonableError(`${name} is not a string`);
      if (!Object.hasOwn(storedFieldData(field), value))
        throw new JsonableError(`'${value}' is not a valid choice for '${name}'.`);
      return value;
    }
    case FieldType.USER: {
      if (!Array.isArray(value)) throw new JsonableError("User IDs is not a list");
      const bad = value.findIndex((v) => !Number.isInteger(v));
      if (bad >= 0) throw new JsonableError(`User IDs[${bad}] is not an integer`);
      return JSON.stringify(value);
    }
    default:
      throw new JsonableError("Invalid field type.");
  }
}

/**
 * check_valid_user_ids for every Users value at once: each id must be an active human of the
 * organization ("Invalid user IDs: 1000", "User with ID 5 is deactivated", "User with ID 5 is a
 * bot"). One statement for all the values.
 */
export async function checkUserIds(db: Db, realmId: number, lists: number[][]) {
  const all = [...new Set(lists.flat())];
  if (all.length === 0) return;
  const users = new Map(
    (
      await db.userProfile.findMany({
        where: { realmId, id: { in: all.filter(isStorableId) } },
        select: { id: true, isActive: true, isBot: true },
      })
    ).map((u) => [u.id, u]),
  );
  for (const ids of lists) {
    const invalid = ids.filter((id) => !users.has(id));
    if (invalid.length) throw new JsonableError(`Invalid user IDs: ${invalid.join(", ")}`);
    for (const id of ids) {
      if (!users.get(id)!.isActive) throw new JsonableError(`User with ID ${id} is deactivated`);
      if (users.get(id)!.isBot) throw new JsonableError(`User with ID ${id} is a bot`);
    }
  }
}
