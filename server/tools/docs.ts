/**
 * `npm run docs`: a self-contained Redoc page (works offline: the Redoc bundle is inlined)
 * built from the bundled spec into generated/docs/index.html, which the server serves at
 * /api/docs. `--if-missing` (run before `npm start`) builds it only when absent.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const out = join(root, "generated", "docs", "index.html");
const redocly = join(root, "node_modules", ".bin", "redocly");
if (process.argv.includes("--if-missing")) {
  if (existsSync(out)) process.exit(0);
  // An install without dev dependencies has no Redocly: start anyway, without the docs page.
  if (!existsSync(redocly)) {
    console.warn("API docs not built (Redocly CLI is not installed); /api/docs will say so.");
    process.exit(0);
  }
}
execFileSync(
  redocly,
  ["build-docs", "generated/openapi.json", "--output", out, "--inlineBundle", "--title", "Zulip-compatible chat server API"],
  { cwd: root, stdio: ["ignore", "ignore", "inherit"] },
);
console.log(`API docs written to ${out}`);
