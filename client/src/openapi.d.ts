// The generated types of the spec (generated/openapi.d.ts, `npm run gen`). The package build
// copies that file here as dist/openapi.d.ts, so the published client carries them.
export type * from "../../generated/openapi.d.ts";
