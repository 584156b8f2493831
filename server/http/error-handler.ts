/**
 * The only place that writes an error body: `{result:"error", msg, code, ...extra}`.
 * Validator errors are reworded into Zulip's templates (zerver/lib/typed_endpoint.py
 * ERROR_TEMPLATES) so clients see the texts the real server sends.
 */
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { JsonableError, RequestVariableMissingError } from "../errors.ts";
import { deref, operationFor, type LoadedSpec, type OperationInfo } from "./spec.ts";

interface ValidatorError {
  status: number;
  message: string;
  headers?: Record<string, string>;
  errors?: {
    path: string;
    message: string;
    errorCode?: string;
    params?: Record<string, unknown>;
  }[];
}

function isValidatorError(err: unknown): err is ValidatorError {
  return (
    typeof err === "object" &&
    err !== null &&
    typeof (err as { status?: unknown }).status === "number" &&
    Array.isArray((err as { errors?: unknown }).errors)
  );
}

const TYPE_NAMES: Record<string, string> = {
  integer: "an integer",
  number: "a float",
  boolean: "a boolean",
  array: "a list",
  object: "a dict",
  string: "a string",
};

/**
 * `/body/to/1` → `to[1]`; `/body/draft/content` → `draft["content"]` (Zulip's naming). A narrow
 * term's fields are checked by Zulip's NarrowParameter, whose texts name the field alone:
 * `/query/narrow/0/operand/1` → `operand[1]`.
 */
export function zulipVarName(path: string): string {
  let [, , name = "", ...rest] = path.split("/");
  if (name === "narrow" && rest.length >= 2 && /^\d+$/.test(rest[0]!) && !/^\d+$/.test(rest[1]!))
    [name = "", ...rest] = rest.slice(1);
  return name + rest.map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `["${seg}"]`)).join("");
}

/** Zulip's texts for values of a union type (check_string_or_int, check_string_or_int_list). */
const UNION_TYPE_NAMES: Record<string, string> = {
  "string,integer": "a string or integer",
  "string,array": "a string or an integer list",
};

/** A schema's types, `null` left out (Zulip's `T | None` is an optional T, not a union). */
function typesOf(schema: any): string[] {
  const types: unknown[] = Array.isArray(schema?.type)
    ? schema.type
    : schema?.type
      ? [schema.type]
      : [];
  return types.filter((t): t is string => typeof t === "string" && t !== "null");
}

/** The members of a union schema, in order (`oneOf`/`anyOf`, or a type list), or undefined. */
function unionMembers(doc: any, schema: any): any[] | undefined {
  const s = deref(doc, schema);
  const branches = s?.oneOf ?? s?.anyOf;
  if (Array.isArray(branches)) return branches.map((b: any) => deref(doc, b));
  const types = typesOf(s);
  return types.length > 1 ? types.map((type) => ({ ...s, type })) : undefined;
}

const PYDANTIC_TAGS: Record<string, string> = {
  integer: "int",
  string: "str",
  boolean: "bool",
  number: "float",
};

/** Pydantic's tag for a union member (`int`, `list[str]`), which Zulip's error texts name. */
function pydanticTag(doc: any, schema: any): string | undefined {
  const [type, more] = typesOf(deref(doc, schema));
  if (!type || more) return undefined;
  if (type === "array") {
    const items = pydanticTag(doc, deref(doc, schema).items);
    return items && `list[${items}]`;
  }
  return PYDANTIC_TAGS[type];
}

/** The first type error of `value` against one member, in Zulip's words, if it has one. */
function memberTypeError(doc: any, schema: any, value: unknown, name: string): string | undefined {
  const s = deref(doc, schema);
  const [type] = typesOf(s);
  const fails: Record<string, boolean> = {
    integer: !(typeof value === "number" && Number.isInteger(value)),
    number: typeof value !== "number",
    string: typeof value !== "string",
    boolean: typeof value !== "boolean",
    array: !Array.isArray(value),
  };
  if (type === undefined || !(type in fails)) return undefined;
  if (fails[type]) return `${name} is not ${TYPE_NAMES[type]}`;
  if (type === "array")
    for (const [i, item] of (value as unknown[]).entries()) {
      const error = memberTypeError(doc, s.items, item, `${name}[${i}]`);
      if (error) return error;
    }
  return undefined;
}

/**
 * A value that fits no member of a union: Zulip reports pydantic's first error, which is the
 * first member's, its location naming the member (`to["int"] is not an integer`,
 * `principals["list[str]"][0] is not a string`). The union is found by walking the spec's
 * schema along the error's path. Unions whose first member is a string keep their own texts
 * (narrow operands' "operand is not a string or integer", settings' "Bad value for …").
 */
function unionError(
  doc: any,
  op: OperationInfo | undefined,
  path: string,
  sent: Record<string, unknown>,
): JsonableError | undefined {
  const [, where, name = "", ...rest] = path.split("/");
  const operation = op && doc.paths[op.specPath]?.[op.method];
  if (!operation) return undefined;
  let schema: any;
  if (where === "body")
    schema = deref(
      doc,
      deref(doc, operation.requestBody)?.content?.["application/x-www-form-urlencoded"]?.schema,
    )?.properties?.[name];
  else {
    const params = [
      ...(doc.paths[op.specPath].parameters ?? []),
      ...(operation.parameters ?? []),
    ].map((p: any) => deref(doc, p));
    const param = params.find((p: any) => p.in === where && p.name === name);
    schema = param?.schema ?? param?.content?.["application/json"]?.schema;
  }
  let value = sent[name];
  let at = name;
  for (;;) {
    schema = deref(doc, schema);
    if (!schema) return undefined;
    const members = unionMembers(doc, schema);
    if (members) {
      const tag = pydanticTag(doc, members[0]);
      if (!tag || typesOf(members[0]).includes("string")) return undefined;
      const error = memberTypeError(doc, members[0], value, `${at}["${tag}"]`);
      return error ? new JsonableError(error) : undefined;
    }
    const segment = rest.shift();
    if (segment === undefined) return undefined;
    if (Array.isArray(value)) {
      schema = schema.items;
      value = value[Number(segment)];
      at += `[${segment}]`;
    } else {
      schema = schema.properties?.[segment];
      value = (value as Record<string, unknown> | undefined)?.[segment];
      at += `["${segment}"]`;
    }
  }
}

function fromValidatorError(
  err: ValidatorError,
  inList: Set<string>,
  enumErrors: Map<string, string> = new Map(),
  sent: Record<string, unknown> = {},
  union?: () => JsonableError | undefined,
): JsonableError {
  if (err.status !== 400 || !err.errors?.length)
    return new JsonableError(err.message, { httpStatus: err.status });
  const first = err.errors[0]!;
  const code = first.errorCode?.replace(".openapi.validation", "") ?? "";
  if (code === "required") {
    // The validator names the missing property last in the path (`/body/op`).
    const missing = String(
      (first.params as { missingProperty?: string } | undefined)?.missingProperty ??
        first.path.split("/").at(-1),
    );
    const at =
      first.path.split("/").length > 3
        ? zulipVarName(first.path.split("/").slice(0, -1).join("/"))
        : "";
    return at
      ? new JsonableError(`${at} is missing field '${missing}'`)
      : new RequestVariableMissingError(missing);
  }
  const varName = zulipVarName(first.path);
  const topName = varName.split(/[[]/)[0]!;
  // For unions (oneOf/anyOf) Ajv reports each branch; Zulip answers with one generic line.
  const inUnion = union?.();
  if (inUnion) return inUnion;
  if (err.errors.some((e) => /^(oneOf|anyOf)\./.test(e.errorCode ?? "")))
    return new JsonableError(`Invalid ${varName}`);
  switch (code) {
    case "type": {
      const wanted = first.message.replace(/^must be /, "");
      const single = wanted.split(",")[0]!;
      return new JsonableError(
        `${varName} is not ${UNION_TYPE_NAMES[wanted] ?? TYPE_NAMES[single] ?? single}`,
      );
    }
    case "enum":
    case "const":
      if (enumErrors.has(topName))
        return new JsonableError(
          enumErrors.get(topName)!.replace("{value}", String(sent[topName])),
        );
      return new JsonableError(
        inList.has(topName)
          ? `Invalid ${varName}: Value error, Not in the list of possible values`
          : `Invalid ${varName}`,
      );
    case "maxLength":
      return new JsonableError(
        `${varName} is too long (limit: ${(first.params as { limit?: number } | undefined)?.limit ?? first.message.match(/\d+/)?.[0]} characters)`,
      );
    case "minLength":
      return new JsonableError(`${varName} cannot be blank`);
    case "additionalProperties":
      return new JsonableError(
        `Argument "${(first.params as { additionalProperty?: string } | undefined)?.additionalProperty ?? first.path.split("/").at(-1)}" at ${varName} is unexpected`,
      );
    default:
      return new JsonableError(`Invalid ${varName}`);
  }
}

/** An error of reading the body (body-parser's http-errors, zlib's through them): the client's fault. */
interface BodyReadError {
  status: number;
  expose: true;
  type?: string;
  charset?: string;
  encoding?: string;
  code?: string;
}

function isBodyReadError(err: unknown): err is BodyReadError {
  const e = err as BodyReadError | null;
  return (
    typeof e === "object" &&
    e !== null &&
    e.expose === true &&
    typeof e.status === "number" &&
    e.status >= 400 &&
    e.status < 500
  );
}

function fromBodyReadError(err: BodyReadError): JsonableError {
  switch (err.type) {
    case "entity.too.large":
      return new JsonableError("Request body too large", { httpStatus: 413 });
    case "entity.parse.failed":
      return new JsonableError("Malformed JSON", { code: "INVALID_JSON" });
    case "encoding.unsupported":
      return new JsonableError(`Unsupported Content-Encoding: ${err.encoding ?? ""}`.trim());
    case "charset.unsupported":
      return new JsonableError(`Unsupported charset: ${err.charset ?? ""}`.trim());
  }
  // zlib's errors (no type, a code): a gzip/deflate/br Content-Encoding over a body that is not so encoded.
  if (err.type === undefined && typeof err.code === "string")
    return new JsonableError("The request body is not encoded as its Content-Encoding says");
  return new JsonableError("Malformed request body");
}

/**
 * Writes an error envelope with res.send, not res.json: the validator checks responses by
 * wrapping res.json, and an error body it refused (a status the operation does not declare)
 * would escape as Express's HTML page. Tests check every error body against the spec instead.
 */
function sendError(res: Response, body: Record<string, unknown>) {
  res.type("application/json").send(JSON.stringify(body));
}

/**
 * A URL as logged: without its query string, where Zulip's clients may send any parameter,
 * `password` (POST /fetch_api_key, POST /users) and `api_key` among them.
 */
const withoutQuery = (url: string) => url.split("?")[0];

export function errorHandler(spec: LoadedSpec, log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let error: JsonableError;
    if (err instanceof JsonableError) error = err;
    else if (isValidatorError(err) && err.status !== 500) {
      if (err.status === 405) {
        // Zulip's json_method_not_allowed sends no `code`; every other error of ours has one
        // (feature level 76: "every error has a code"), and clients that read `code` before
        // `msg` would otherwise get undefined. BAD_REQUEST is JsonableError's default code.
        sendError(res.status(405).set(err.headers ?? {}), {
          result: "error",
          msg: "Method Not Allowed",
          code: "BAD_REQUEST",
          allowed_methods: (err.headers?.Allow ?? "").split(", ").filter(Boolean),
        });
        return;
      }
      if (err.status === 404) error = new JsonableError("Endpoint not found", { httpStatus: 404 });
      else {
        const op = operationFor(spec, req);
        const sent = {
          ...(req.query as object),
          ...(typeof req.body === "object" ? req.body : {}),
        };
        error = fromValidatorError(err, op?.inListParams ?? new Set(), op?.enumErrors, sent, () =>
          unionError(spec.doc, op, err.errors![0]!.path, sent),
        );
      }
    } else if (isBodyReadError(err)) {
      if (err.type === "request.aborted") {
        // The client went away before sending its whole body: nobody is left to answer.
        log.debug(
          { method: req.method, url: withoutQuery(req.originalUrl) },
          "client disconnected before sending its body",
        );
        return;
      }
      error = fromBodyReadError(err);
    } else {
      log.error(
        { err, method: req.method, url: withoutQuery(req.originalUrl) },
        "unexpected error",
      );
      error = new JsonableError("Internal server error", {
        code: "INTERNAL_SERVER_ERROR",
        httpStatus: 500,
      });
    }
    if (res.headersSent) return;
    sendError(res.status(error.httpStatus).set(error.headers), {
      result: "error",
      msg: error.message,
      code: error.code,
      ...error.data(),
    });
  };
}
