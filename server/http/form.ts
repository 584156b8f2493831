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
import type { OperationInfo } from "./spec.ts";

const MAX_BODY = "25mb";

/** Last value wins for repeated keys, for query strings and form bodies alike. */
export function parseParams(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(raw)) out[k] = v;
  return out;
}

const multipart = multer({ limits: { fieldSize: 25 * 1024 * 1024 } }).none();

export function bodyParsers() {
  return [
    express.text({ type: "application/x-www-form-urlencoded", limit: MAX_BODY }),
    // Zulip clients send forms; a JSON object body is read as the same parameters (its
    // values may already be typed). Malformed JSON becomes a 400 in the error handler.
    express.json({ type: "application/json", limit: MAX_BODY }),
    (req: Request, res: Response, next: NextFunction) => {
      if (req.is("multipart/form-data")) return multipart(req, res, (err?: unknown) => next(err ? new JsonableError("Invalid multipart body") : undefined));
      next();
    },
    mergeParams,
  ];
}

/** The query string as sent (before validation adds defaults), parsed once per request. */
export function sentQuery(res: Response): Record<string, string> {
  return res.locals.sentQuery as Record<string, string>;
}

function mergeParams(req: Request, res: Response, next: NextFunction) {
  const query = parseParams(req.url.split("?")[1] ?? "");
  res.locals.sentQuery = query;
  if (typeof req.body === "string") req.body = parseParams(req.body);
  else if (req.is("multipart/form-data")) req.body = Object.fromEntries(Object.entries(req.body ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.at(-1) : v]));
  if (req.method === "GET" || req.method === "HEAD") return next();
  if (req.is("application/json") && (Array.isArray(req.body) || typeof req.body !== "object" || req.body === null))
    return next(new JsonableError("Malformed JSON", { code: "INVALID_JSON" }));
  // The validator knows the documented form encoding only: a body-less PATCH from zulip-js
  // (no content type), a parsed multipart or JSON body, and a body of any other type (which,
  // as in Zulip, is not read: its parameters are missing) are all checked as that form.
  req.headers["content-type"] = "application/x-www-form-urlencoded";
  const body: Record<string, unknown> = req.body && typeof req.body === "object" ? req.body : {};
  for (const [k, v] of Object.entries(query)) if (!(k in body)) body[k] = v;
  req.body = body;
  next();
}

/**
 * Decodes the form fields that Zulip sends as JSON text (`to=[8,9]`, `read_by_sender=true`)
 * so that the validator checks the decoded value. A field whose schema also allows a string
 * keeps its raw text when it is not JSON (e.g. `to=Verona`).
 */
export function decodeJsonFields(op: OperationInfo, body: Record<string, unknown>, query: Record<string, string>) {
  // The validator decodes JSON query parameters itself (decoding them here would decode twice);
  // only refuse text that is not JSON, with Zulip's wording.
  for (const name of op.jsonQueryParams) {
    const raw = query[name];
    if (raw === undefined) continue;
    try {
      JSON.parse(raw);
    } catch {
      throw new JsonableError(`${name} is not valid JSON`);
    }
  }
  for (const [name, { allowsString }] of op.jsonBodyFields) {
    const raw = body[name];
    if (typeof raw !== "string") continue;
    try {
      body[name] = JSON.parse(raw);
    } catch {
      if (!allowsString) throw new JsonableError(`${name} is not valid JSON`);
    }
  }
}

/**
 * Numbers JavaScript cannot hold exactly (`1e999`, 2^53 and beyond) pass JSON Schema's integer
 * check but cannot name anything; refuse them as Zulip refuses an invalid value.
 */
export function refuseInexactNumbers(params: Record<string, unknown>) {
  const visit = (value: unknown, name: string): void => {
    if (typeof value === "number" && !(Number.isFinite(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER)) throw new JsonableError(`Invalid ${name}`);
    if (Array.isArray(value)) value.forEach((v, i) => visit(v, `${name}[${i}]`));
    else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) visit(v, `${name}["${k}"]`);
  };
  for (const [name, value] of Object.entries(params)) visit(value, name);
}
