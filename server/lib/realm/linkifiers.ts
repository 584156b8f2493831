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
    dicts: rows.map((r) => ({ id: r.id, pattern: r.pattern, url_template: r.urlTemplate })),
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

/**
 * RealmFilter.full_clean: the URL template first ("Invalid URL template."), then the pattern
 * ("Bad regular expression: …"), then the pattern's groups against the template's variables.
 */
export function checkLinkifier(pattern: string, urlTemplate: string): void {
  if (!isValidUrlTemplate(urlTemplate)) throw new JsonableError("Invalid URL template.");
  const translated = translatePattern(pattern);
  if ("error" in translated) throw new JsonableError(`Bad regular expression: ${translated.error}`);
  const groups = new Set(groupNames(translated.source));
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
