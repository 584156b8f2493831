/**
 * Handler typing derived from the generated spec types: a handler receives the decoded,
 * validated parameters of its operation and returns the success data (the 200 body without
 * the envelope fields). The handler map in routes.ts is checked against every operationId.
 */
import type { operations } from "../../generated/openapi.d.ts";
import type { RequestContext, PublicContext } from "../context.ts";

export type OperationId = keyof operations;
type Op<K extends OperationId> = operations[K];
type Params<K extends OperationId> = Op<K> extends { parameters: infer P } ? P : never;

export type PathOf<K extends OperationId> =
  Params<K> extends { path?: infer P } ? NonNullable<P> : Record<string, never>;
export type QueryOf<K extends OperationId> =
  Params<K> extends { query?: infer Q } ? NonNullable<Q> : Record<string, never>;
export type BodyOf<K extends OperationId> =
  Op<K> extends { requestBody?: { content: { "application/x-www-form-urlencoded": infer B } } }
    ? B
    : Record<string, never>;

type OkBody<K extends OperationId> =
  Op<K> extends { responses: { 200: { content: { "application/json": infer R } } } } ? R : never;
export type SuccessData<K extends OperationId> = Omit<
  OkBody<K>,
  "result" | "msg" | "ignored_parameters_unsupported"
>;

export interface Input<K extends OperationId> {
  path: PathOf<K>;
  query: QueryOf<K>;
  body: BodyOf<K>;
}

/**
 * Operations that need no authentication (`security: []` in the spec). The generated types do
 * not carry `security`, so the list is written here and checked against the spec by a test.
 */
export const PUBLIC_OPERATIONS = [
  "get-server-settings",
  "fetch-api-key",
  "dev-fetch-api-key",
] as const;
type PublicOperation = (typeof PUBLIC_OPERATIONS)[number];

export type Handler<K extends OperationId> = (
  input: Input<K>,
  ctx: K extends PublicOperation ? PublicContext : RequestContext,
) => Promise<SuccessData<K>>;

export type HandlerMap = { [K in OperationId]: Handler<K> };

export type { Schemas, ApiUser, ApiMessage } from "../lib/schemas.ts";
