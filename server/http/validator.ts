/**
 * express-openapi-validator as this server mounts it: request validation against the bundled
 * spec (skipped for operations that take no input), and response validation when configured.
 * server/app.ts puts authentication, rate limits and JSON-in-form decoding before the request
 * check; `npm run bench`'s minimal server mounts the same chain as it is, to measure what the
 * validator alone costs (test/bench/minimal-server.ts).
 */
import type { NextFunction, Request, Response } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { operationFor, type LoadedSpec } from "./spec.ts";

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/**
 * The validator's request check, skipped for operations that take no input at all (no
 * parameter, no body: GET /users/me): there is nothing in the request for it to check.
 */
function unlessWithoutInput(spec: LoadedSpec, validate: Middleware): Middleware {
  return function requestMiddleware(req: Request, res: Response, next: NextFunction) {
    const op = operationFor(spec, req);
    if (
      op &&
      op.knownParams.size === 0 &&
      Object.keys(op.pathParamTypes).length === 0 &&
      !op.hasRequestBody
    )
      return next();
    validate(req, res, next);
  };
}

/** The validator's middleware chain, and where in it the request check sits. */
export function validatorChain(
  spec: LoadedSpec,
  validateResponses: boolean,
): { chain: Middleware[]; requestAt: number } {
  const chain = OpenApiValidator.middleware({
    // The validator clones the document it is given, and the bundled spec has no external
    // references to resolve (mode "none" is ours: patches/express-openapi-validator+5.6.2.patch).
    apiSpec: spec.validatorDoc as Parameters<typeof OpenApiValidator.middleware>[0]["apiSpec"],
    $refParser: { mode: "none" as "bundle" },
    validateRequests: {
      coerceTypes: false,
      allowUnknownQueryParameters: true,
      removeAdditional: false,
    },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    validateApiSpec: false,
    fileUploader: false,
  }) as unknown as Middleware[];
  const requestAt = chain.findIndex((m) => m.name === "requestMiddleware");
  const metadataAt = chain.findIndex((m) => m.name === "metadataMiddleware");
  if (requestAt < 0 || metadataAt < 0 || metadataAt > requestAt)
    throw new Error(
      "express-openapi-validator's middleware layout changed; update server/http/validator.ts",
    );
  chain[requestAt] = unlessWithoutInput(spec, chain[requestAt]!);
  return { chain, requestAt };
}
