/**
 * The only place that writes an error body: `{result:"error", msg, code, ...extra}`.
 * Validator errors are reworded into Zulip's templates (zerver/lib/typed_endpoint.py
 * ERROR_TEMPLATES) so clients see the texts the real server sends.
 */
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { JsonableError, RequestVariableMissingError } from "../errors.ts";
import { operationFor, type LoadedSpec } from "./spec.ts";

interface ValidatorError {
  status: number;
  message: string;
  headers?: Record<string, string>;
  errors?: { path: string; message: string; errorCode?: string; params?: Record<string, unknown> }[];
}

function isValidatorError(err: unknown): err is ValidatorError {
  return typeof err === "object" && err !== null && typeof (err as any).status === "number" && Array.isArray((err as any).errors);
}

const TYPE_NAMES: Record<string, string> = {
  integer: "an integer",
  number: "a float",
  boolean: "a boolean",
  array: "a list",
  object: "a dict",
  string: "a string",
};

/** `/body/to/1` → `to[1]`; `/body/draft/content` → `draft["content"]` (Zulip's naming). */
export function zulipVarName(path: string): string {
  const [, , name = "", ...rest] = path.split("/");
  return name + rest.map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `["${seg}"]`)).join("");
}

function fromValidatorError(err: ValidatorError, inList: Set<string>): JsonableError {
  if (err.status !== 400 || !err.errors?.length) return new JsonableError(err.message, { httpStatus: err.status });
  const first = err.errors[0]!;
  const code = first.errorCode?.replace(".openapi.validation", "") ?? "";
  if (code === "required") {
    // The validator names the missing property last in the path (`/body/op`).
    const missing = String((first.params as any)?.missingProperty ?? first.path.split("/").at(-1));
    const at = first.path.split("/").length > 3 ? zulipVarName(first.path.split("/").slice(0, -1).join("/")) : "";
    return at ? new JsonableError(`${at} is missing field '${missing}'`) : new RequestVariableMissingError(missing);
  }
  const varName = zulipVarName(first.path);
  const topName = varName.split(/[[]/)[0]!;
  // For unions (oneOf/anyOf) Ajv reports each branch; Zulip answers with one generic line.
  if (err.errors.some((e) => /^(oneOf|anyOf)\./.test(e.errorCode ?? ""))) return new JsonableError(`Invalid ${varName}`);
  switch (code) {
    case "type": {
      const wanted = first.message.replace(/^must be /, "").split(",")[0]!;
      return new JsonableError(`${varName} is not ${TYPE_NAMES[wanted] ?? wanted}`);
    }
    case "enum":
    case "const":
      return new JsonableError(inList.has(topName) ? `Invalid ${varName}: Value error, Not in the list of possible values` : `Invalid ${varName}`);
    case "maxLength":
      return new JsonableError(`${varName} is too long (limit: ${(first.params as any)?.limit ?? first.message.match(/\d+/)?.[0]} characters)`);
    case "minLength":
      return new JsonableError(`${varName} cannot be blank`);
    case "additionalProperties":
      return new JsonableError(`Argument "${(first.params as any)?.additionalProperty ?? first.path.split("/").at(-1)}" at ${varName} is unexpected`);
    default:
      return new JsonableError(`Invalid ${varName}`);
  }
}

export function errorHandler(spec: LoadedSpec, log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let error: JsonableError;
    if (err instanceof JsonableError) error = err;
    else if (isValidatorError(err) && err.status !== 500) {
      if (err.status === 405) {
        res.status(405).set(err.headers ?? {}).json({ result: "error", msg: "Method Not Allowed", allowed_methods: (err.headers?.Allow ?? "").split(", ").filter(Boolean) });
        return;
      }
      if (err.status === 404) error = new JsonableError("Endpoint not found", { httpStatus: 404 });
      else {
        error = fromValidatorError(err, operationFor(spec, req)?.inListParams ?? new Set());
      }
    } else if ((err as any)?.type === "entity.too.large") error = new JsonableError("Request body too large", { httpStatus: 413 });
    else if ((err as any)?.type === "entity.parse.failed") error = new JsonableError("Malformed JSON", { code: "INVALID_JSON" });
    else {
      log.error({ err, method: req.method, url: req.originalUrl }, "unexpected error");
      error = new JsonableError("Internal server error", { code: "INTERNAL_SERVER_ERROR", httpStatus: 500 });
    }
    if (res.headersSent) return;
    res.status(error.httpStatus).set(error.headers).json({ result: "error", msg: error.message, code: error.code, ...error.data() });
  };
}
