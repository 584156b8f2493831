/**
 * Zulip's parameter conventions, applied before the validator sees a request:
 * form-urlencoded and multipart bodies, parameters also read from the query string of a
 * POST/PATCH/DELETE (typed_endpoint reads request.POST then request.GET; zulip-js sends PATCH
 * parameters in the query string), the last value winning for a repeated key (as Django's
 * QueryDict does), and JSON-encoded form fields decoded from the spec's `encoding`.
 */
import express from "express";
import multer from "multer";
import type { NextFunction, Request, Response } from "express";
import { JsonableError } from "../errors.ts";
import { checkJsonQueryParam } from "./json-params.ts";
import type { ClampedParam, LoadedSpec, OperationInfo } from "./spec.ts";

const MAX_BODY = "25mb";

/**
 * How deep a JSON value may nest: Zulip parses with orjson, which refuses more than 1024
 * levels as invalid JSON. Everything that later walks a value (validation, serializers,
 * JSON.stringify) recurses, so nothing deeper may get in.
 */
export const MAX_JSON_DEPTH = 1024;

/** JSON.parse, refusing (as SyntaxError) values nested deeper than MAX_JSON_DEPTH. */
export function parseJson(text: string): unknown {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) throw new SyntaxError("JSON nested too deeply");
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return JSON.parse(text);
}

/** Last value wins for repeated keys, for query strings and form bodies alike. */
export function parseParams(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(raw)) out[k] = v;
  return out;
}

const multipart = multer({ limits: { fieldSize: 25 * 1024 * 1024 } }).none();

export function bodyParsers() {
  const readers = [
    express.text({ type: "application/x-www-form-urlencoded", limit: MAX_BODY }),
    // Zulip clients send forms; a JSON object body is read as the same parameters (its
    // values may already be typed). It is parsed in mergeParams, depth-limited.
    express.text({ type: "application/json", limit: MAX_BODY }),
    (req: Request, res: Response, next: NextFunction) => {
      if (req.is("multipart/form-data"))
        return multipart(req, res, (err?: unknown) =>
          next(err ? new JsonableError("Invalid multipart body") : undefined),
        );
      next();
    },
  ];
  // Zulip (Django) never reads the body of a GET or HEAD: whatever it holds, or however it is
  // encoded, changes nothing. Any other body that cannot be read is refused only once the
  // operation is known (see bodyError), so a wrong method or path still answers 405 or 404.
  const reading =
    (reader: (req: Request, res: Response, next: NextFunction) => void) =>
    (req: Request, res: Response, next: NextFunction) => {
      if (req.method === "GET" || req.method === "HEAD") return next();
      reader(req, res, (err?: unknown) => {
        // A client that went away mid-body needs no answer: stop here.
        if (err && (err as { type?: string }).type === "request.aborted") return next(err);
        if (err) res.locals.bodyError = err;
        next();
      });
    };
  return [...readers.map(reading), mergeParams];
}

/** Why the body could not be read, if it could not; raised after route lookup and authentication. */
export function bodyError(res: Response): unknown {
  return res.locals.bodyError;
}

/** The query string as sent (before validation adds defaults), parsed once per request. */
export function sentQuery(res: Response): Record<string, string> {
  return res.locals.sentQuery as Record<string, string>;
}

function mergeParams(req: Request, res: Response, next: NextFunction) {
  // Everything after the first `?` is the query, `?` included (`msg_ids={"?":1}` sent raw).
  const at = req.url.indexOf("?");
  const query = parseParams(at < 0 ? "" : req.url.slice(at + 1));
  res.locals.sentQuery = query;
  if (typeof req.body === "string") {
    if (req.is("application/json")) {
      try {
        req.body = parseJson(req.body);
      } catch {
        res.locals.bodyError = new JsonableError("Malformed JSON", { code: "INVALID_JSON" });
        req.body = {};
      }
    } else req.body = parseParams(req.body);
  } else if (req.is("multipart/form-data"))
    req.body = Object.fromEntries(
      Object.entries((req.body ?? {}) as Record<string, unknown>).map(([k, v]) => [
        k,
        Array.isArray(v) ? v.at(-1) : v,
      ]),
    );
  if (req.method === "GET" || req.method === "HEAD") return next();
  if (
    req.is("application/json") &&
    (Array.isArray(req.body) || typeof req.body !== "object" || req.body === null)
  ) {
    res.locals.bodyError ??= new JsonableError("Malformed JSON", { code: "INVALID_JSON" });
    req.body = {};
  }
  // The validator knows the documented form encoding only: a body-less PATCH from zulip-js
  // (no content type), a parsed multipart or JSON body, and a body of any other type (which,
  // as in Zulip, is not read: its parameters are missing) are all checked as that form.
  req.headers["content-type"] = "application/x-www-form-urlencoded";
  const body: Record<string, unknown> =
    req.body && typeof req.body === "object" ? (req.body as Record<string, unknown>) : {};
  for (const [k, v] of Object.entries(query)) if (!(k in body)) body[k] = v;
  req.body = body;
  next();
}

/**
 * Decodes the parameters that Zulip sends as JSON text so that the validator checks the
 * decoded value: form fields (`to=[8,9]`, `read_by_sender=true`; one whose schema also allows a
 * string keeps its raw text when it is not JSON, e.g. `to=Verona`) in place, and JSON query
 * parameters (`narrow=[…]`), which are also checked here, strictly, and returned decoded.
 */
export function decodeJsonFields(
  spec: LoadedSpec,
  op: OperationInfo,
  body: Record<string, unknown>,
  query: Record<string, string>,
): Record<string, unknown> | undefined {
  let decodedQuery: Record<string, unknown> | undefined;
  for (const [name, pointer] of op.jsonQueryParams) {
    const raw = query[name];
    if (raw === undefined) continue;
    let value: unknown;
    try {
      value = parseJson(raw);
    } catch {
      throw new JsonableError(`${name} is not valid JSON`);
    }
    checkJsonQueryParam(spec, name, pointer, value);
    (decodedQuery ??= { ...query })[name] = value;
  }
  for (const [name, clamp] of op.clampedParams) {
    const raw = query[name];
    if (raw === undefined || clamp.strings.has(raw)) continue;
    (decodedQuery ??= { ...query })[name] = clampInteger(name, raw, clamp);
  }
  for (const [name, { allowsString }] of op.jsonBodyFields) {
    const raw = body[name];
    if (typeof raw !== "string") continue;
    // A text that cannot start a JSON value (`to=Verona`) stays a string without a thrown SyntaxError:
    // an exception (its stack captured) per send was 1–2% of the CPU of POST /messages.
    if (allowsString && !JSON_START.test(raw)) continue;
    try {
      body[name] = parseJson(raw);
    } catch {
      if (!allowsString) throw new JsonableError(`${name} is not valid JSON`);
    }
  }
  return decodedQuery;
}

/** What JSON.parse can accept: JSON whitespace, then the first character of a JSON value. */
const JSON_START = /^[ \t\n\r]*["[{\-0-9tfn]/;

/** Python's int() text: surrounding whitespace, a sign, digits (single `_` between them). */
const INTEGER_TEXT = /^\s*[-+]?\d+(?:_\d+)*\s*$/;

/**
 * Zulip's parse_anchor_value: any integer text, however long, clamped into the range; any other
 * text is refused, where the validator would have coerced `1e3` or `0x10` to a number.
 */
function clampInteger(name: string, raw: string, { minimum, maximum }: ClampedParam): number {
  if (!INTEGER_TEXT.test(raw)) throw new JsonableError(`Invalid ${name}`);
  const value = BigInt(raw.trim().replaceAll("_", ""));
  return Number(value < minimum ? minimum : value > maximum ? maximum : value);
}

/**
 * Numbers JavaScript cannot hold exactly (`1e999`, 2^53 and beyond) pass JSON Schema's integer
 * check but cannot name anything; refuse them as Zulip refuses an invalid value.
 */
export function refuseInexactNumbers(
  params: Record<string, unknown>,
  clamped: ReadonlyMap<string, unknown> = new Map(),
) {
  // Iterative, so that no value (however it got in) can overflow the stack.
  // Children are pushed in reverse, so the first inexact number in document order is named.
  // A clamped parameter's value was made by clampInteger, exactly (10^16 is a double).
  const stack: [unknown, string][] = Object.entries(params)
    .filter(([name]) => !clamped.has(name))
    .map(([name, value]): [unknown, string] => [value, name])
    .reverse();
  while (stack.length > 0) {
    const [value, name] = stack.pop()!;
    if (
      typeof value === "number" &&
      !(Number.isFinite(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER)
    )
      throw new JsonableError(`Invalid ${name}`);
    if (Array.isArray(value))
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${name}[${i}]`]);
    else if (value && typeof value === "object")
      for (const [k, v] of Object.entries(value).reverse()) stack.push([v, `${name}["${k}"]`]);
  }
}
