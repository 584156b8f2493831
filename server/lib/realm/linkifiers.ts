/**
 * An organization's linkifiers (zerver/models/linkifiers.py): read once per process and kept,
 * compiled, until a change names `linkifiers:<realm id>` (lib/caches.ts), so rendering a message
 * and building message dicts (topic_links) read nothing; and Zulip's validation of a new or
 * changed linkifier, with its texts.
 */
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { perClientCache } from "../caches.ts";
import {
  compileLinkifier,
  groupNames,
  isValidUrlTemplate,
  templateVariables,
  topicLinks,
  translatePattern,
  type CompiledLinkifier,
  type LinkifierMatch,
} from "../markdown/linkifiers.ts";
import { WEB_LINK_RE } from "../markdown/urls.ts";

export interface LinkifierDict {
  id: number;
  pattern: string;
  url_template: string;
  example_input: string | null;
  reverse_template: string | null;
  alternative_url_templates: string[];
}
interface Loaded {
  dicts: LinkifierDict[];
  compiled: CompiledLinkifier[];
}

const cacheFor = perClientCache<{ realms: Map<number, Loaded>; generation: number }>(
  () => ({ realms: new Map(), generation: 0 }),
  (cache, kind, id) => {
    if (kind === "*") cache.realms.clear();
    else if (kind === "linkifiers") cache.realms.delete(id);
  },
);

/**
 * The organization's linkifiers in their order (linkifiers_for_realm), cached per process.
 * `cacheDb`: the root client whose cache serves a read through a transaction that does not
 * write linkifiers (a send's).
 */
async function loaded(db: Db, realmId: number, cacheDb?: Db): Promise<Loaded> {
  const cache = cacheFor(cacheDb ?? db);
  const hit = cache?.realms.get(realmId);
  if (hit) return hit;
  const generation = cache?.generation;
  const rows = await db.realmFilter.findMany({
    where: { realmId },
    orderBy: [{ order: "asc" }, { id: "asc" }],
  });
  const value: Loaded = {
    dicts: rows.map((r) => ({
      id: r.id,
      pattern: r.pattern,
      url_template: r.urlTemplate,
      example_input: r.exampleInput,
      reverse_template: r.reverseTemplate,
      alternative_url_templates: r.alternativeUrlTemplates,
    })),
    compiled: rows.flatMap((r) => compileLinkifier(r) ?? []),
  };
  if (cache && cache.generation === generation) cache.realms.set(realmId, value);
  return value;
}

/** GET /realm/linkifiers, register's `realm_linkifiers` and the `realm_linkifiers` event. */
export async function realmLinkifiers(db: Db, realmId: number): Promise<LinkifierDict[]> {
  return (await loaded(db, realmId)).dicts;
}

/** Register's `realm_linkifiers`: empty for a client without the `linkifier_url_template` capability, as in Zulip. */
export async function registerLinkifiers(
  db: Db,
  realmId: number,
  capabilities: Record<string, boolean | undefined>,
): Promise<LinkifierDict[]> {
  return capabilities.linkifier_url_template ? realmLinkifiers(db, realmId) : [];
}

/** What the Markdown renderer applies. */
export async function compiledLinkifiers(
  db: Db,
  realmId: number,
  cacheDb?: Db,
): Promise<readonly CompiledLinkifier[]> {
  return (await loaded(db, realmId, cacheDb)).compiled;
}

/** A topic's bare URLs (topic_links' "raw URLs"), scheme-less ones as https. */
function webLinks(topic: string): LinkifierMatch[] {
  const out: LinkifierMatch[] = [];
  // Every form WEB_LINK_RE matches has a dot, a colon or an @ (a domain, a scheme, an address):
  // most topics have none, and the expression (every top-level domain) is costly to run.
  if (!/[.:@]/.test(topic)) return out;
  for (const m of topic.matchAll(new RegExp(WEB_LINK_RE.source, WEB_LINK_RE.flags))) {
    const text = m[0];
    out.push({
      index: m.index,
      text,
      url: /^[a-z][a-z0-9+.-]*:/i.test(text) ? text : `https://${text}`,
    });
  }
  return out;
}

/** topic_links of a channel message's topic, with the linkifiers already loaded. */
export function topicLinksOf(linkifiers: readonly CompiledLinkifier[], topic: string) {
  return topicLinks(linkifiers, topic, webLinks);
}

/** The reverse-linkification fields (feature levels 471 and 478), already normalized. */
export interface ReverseFields {
  exampleInput: string | null;
  reverseTemplate: string | null;
  alternativeUrlTemplates: string[];
}

/** normalize_optional_text: stripped, and empty means none. */
export function optionalText(value: string | null | undefined): string | null {
  const stripped = value?.trim();
  return stripped ? stripped : null;
}

/**
 * RealmFilter.full_clean: the URL template first ("Invalid URL template."), then the pattern
 * ("Bad regular expression: …"), the example and reverse template, then the pattern's groups
 * against the template's variables; the alternative URL templates last, each as the URL template.
 */
export function checkLinkifier(
  pattern: string,
  urlTemplate: string,
  reverse?: ReverseFields,
): void {
  if (!isValidUrlTemplate(urlTemplate)) throw new JsonableError("Invalid URL template.");
  const translated = translatePattern(pattern);
  if ("error" in translated) throw new JsonableError(`Bad regular expression: ${translated.error}`);
  const groups = new Set(groupNames(translated.source));
  if (reverse) checkReverse(translated.source, groups, reverse);
  checkTemplateGroups(groups, urlTemplate);
  for (const alternative of reverse?.alternativeUrlTemplates ?? []) {
    if (!isValidUrlTemplate(alternative)) throw new JsonableError("Invalid URL template.");
    checkTemplateGroups(groups, alternative);
  }
}

function checkTemplateGroups(groups: Set<string>, urlTemplate: string) {
  const variables = templateVariables(urlTemplate);
  const missingInPattern = [...variables].filter((v) => !groups.has(v)).sort();
  if (missingInPattern.length)
    throw new JsonableError(
      `Group '${missingInPattern[0]}' in URL template is not present in linkifier pattern.`,
    );
  const missingInTemplate = [...groups].filter((g) => !variables.has(g)).sort();
  if (missingInTemplate.length)
    throw new JsonableError(
      `Group '${missingInTemplate[0]}' in linkifier pattern is not present in URL template.`,
    );
}

/** The example must match the pattern (searched anywhere), and the reverse template give it back. */
function checkReverse(source: string, groups: Set<string>, reverse: ReverseFields) {
  const { exampleInput, reverseTemplate } = reverse;
  // Zulip's MissingDependentParameterError(required "Example text", set "auto-conversion field").
  if (reverseTemplate !== null && exampleInput === null)
    throw new JsonableError("Example text is required when auto-conversion field is set.");
  if (exampleInput === null) return;
  const match = new RegExp(source, "u").exec(exampleInput);
  if (!match) throw new JsonableError("Example input does not match the linkifier pattern.");
  if (reverseTemplate === null) return;
  if (expandReverseTemplate(reverseTemplate, match, groups) !== exampleInput)
    throw new JsonableError("Example text does not match auto-conversion field.");
}

/** expand_reverse_template: `{{`/`}}` are literal braces, `{name}` a group of the match. */
function expandReverseTemplate(template: string, match: RegExpExecArray, groups: Set<string>) {
  let out = "";
  let i = 0;
  while (i < template.length) {
    if (template.startsWith("{{", i) || template.startsWith("}}", i)) {
      out += template[i];
      i += 2;
    } else if (template[i] === "{") {
      const end = template.indexOf("}", i + 1);
      if (end === -1)
        throw new JsonableError("Invalid auto-conversion field: missing '}' character.");
      const name = template.slice(i + 1, end);
      if (!name) throw new JsonableError("Invalid auto-conversion field: empty field name.");
      if (!groups.has(name))
        throw new JsonableError(
          `Group '${name}' in auto-conversion field is not present in linkifier pattern.`,
        );
      out += match.groups?.[name] ?? "";
      i = end + 1;
    } else {
      out += template[i];
      i += 1;
    }
  }
  return out;
}
