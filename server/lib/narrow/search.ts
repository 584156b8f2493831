/**
 * Full-text search (zerver/lib/narrow.py _by_search_tsearch) and the highlighting of its
 * results (zerver/views/message_fetch.py highlight_string / get_search_fields), with
 * PostgreSQL's own text search on PostgreSQL and PGlite alike.
 *
 * `message.search_tsvector` is `to_tsvector('english', subject || ' ' || content)`, a stored
 * generated column with a GIN index (migration 20261123215650_messages): the database keeps it,
 * and a search is one `@@` against it. Matches are found for highlighting by ts_headline over
 * the rendered HTML and the HTML-escaped topic, in the statement that reads the messages.
 */
import { Prisma } from "../../db/index.ts";

type Sql = Prisma.Sql;

/** The text search configuration of search_tsvector: a query must use the same one to match it. */
const CONFIG = Prisma.raw("'english'::regconfig");

/**
 * Zulip's delimiters around each match in ts_headline's output. Neither can occur in rendered
 * HTML or an escaped topic, where every "<" of the text is escaped.
 */
const TS_START = "<ts-match>";
const TS_STOP = "</ts-match>";
const HEADLINE_OPTIONS = `HighlightAll = TRUE, StartSel = ${TS_START}, StopSel = ${TS_STOP}`;

const HIGHLIGHT_START = '<span class="highlight">';
const HIGHLIGHT_STOP = "</span>";

/**
 * A search operand as a tsquery: its words as plainto_tsquery reads them (stemmed, stop words
 * and punctuation dropped), and each "quoted phrase" as a phrase query, its words in order.
 * Null when the operand has neither (only blanks), which matches nothing, as in Zulip.
 */
export function searchTsquery(operand: string): Sql | null {
  const words: string[] = [];
  const parts: Sql[] = [];
  for (const [token] of operand.matchAll(/"[^"]+"|\S+/g)) {
    if (token.length > 2 && token.startsWith('"') && token.endsWith('"'))
      parts.push(Prisma.sql`phraseto_tsquery(${CONFIG}, ${token.slice(1, -1)})`);
    else words.push(token);
  }
  if (words.length) parts.unshift(Prisma.sql`plainto_tsquery(${CONFIG}, ${words.join(" ")})`);
  return parts.length ? Prisma.join(parts, " && ") : null;
}

/** The narrow condition of a search: the message's topic and content match the tsquery (through the GIN index). */
export const searchCondition = (tsquery: Sql): Sql => Prisma.sql`m.search_tsvector @@ (${tsquery})`;

/** Zulip's escape_html SQL function, the escaping a topic gets before it is highlighted. */
const escapeHtmlSql = (text: Sql) =>
  Prisma.sql`replace(replace(replace(replace(replace(${text}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;')`;

/**
 * The columns `"matchContent"` and `"matchSubject"`: the rendered content and the HTML-escaped
 * topic, with ts_headline's delimiters around every match of `tsquery` (none without one).
 * `highlight` turns them into Zulip's markup.
 */
export function matchColumns(tsquery: Sql | null, renderedContent: Sql, subject: Sql): Sql {
  const content = Prisma.sql`COALESCE(${renderedContent}, '')`;
  const topic = escapeHtmlSql(subject);
  if (!tsquery) return Prisma.sql`${content} AS "matchContent", ${topic} AS "matchSubject"`;
  const headline = (text: Sql) =>
    Prisma.sql`ts_headline(${CONFIG}, ${text}, (${tsquery}), ${HEADLINE_OPTIONS})`;
  return Prisma.sql`${headline(content)} AS "matchContent", ${headline(topic)} AS "matchSubject"`;
}

/**
 * Zulip's highlight_string over ts_headline's output: each match is wrapped in
 * `<span class="highlight">`, except where it falls inside an HTML tag (an attribute value the
 * parser took for words), where it is left as it is.
 */
export function highlight(delimited: string): string {
  const [head, ...matches] = delimited.split(TS_START);
  let prefix = head!;
  let out = "";
  let inTag = false;
  for (const part of matches) {
    const stop = part.indexOf(TS_STOP);
    const match = stop < 0 ? part : part.slice(0, stop);
    for (const ch of prefix + match) {
      if (ch === "<") inTag = true;
      else if (ch === ">") inTag = false;
    }
    out += inTag ? prefix + match : `${prefix}${HIGHLIGHT_START}${match}${HIGHLIGHT_STOP}`;
    prefix = stop < 0 ? "" : part.slice(stop + TS_STOP.length);
  }
  return out + prefix;
}

/** The `match_content` and `match_subject` fields of a search result. */
export interface SearchMatch {
  match_content: string;
  match_subject: string;
}

/** A row's delimited match columns (see matchColumns) as the API's fields. */
export const searchMatch = (row: { matchContent: string; matchSubject: string }): SearchMatch => ({
  match_content: highlight(row.matchContent),
  match_subject: highlight(row.matchSubject),
});
