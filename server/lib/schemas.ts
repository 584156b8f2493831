/**
 * The spec's schema types (generated/openapi.d.ts): what lib/'s serializers produce. They live
 * here, not in http/, so that lib/ needs nothing from the HTTP layer (eslint.config.js).
 */
import type { components } from "../../generated/openapi.d.ts";

export type Schemas = components["schemas"];
export type ApiUser = Schemas["User"];
export type ApiMessage = Schemas["Message"];
