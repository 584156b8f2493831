// Builds the package: src/*.ts → dist/*.js with .d.ts files, plus the spec's generated types as
// dist/openapi.d.ts (tsc does not copy a .d.ts input). Runs before `npm pack`.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
rmSync(new URL("dist", import.meta.url), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: here, stdio: "inherit" });
mkdirSync(new URL("dist", import.meta.url), { recursive: true });
copyFileSync(
  new URL("../generated/openapi.d.ts", import.meta.url),
  new URL("dist/openapi.d.ts", import.meta.url),
);
