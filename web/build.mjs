/**
 * Builds the web app (`npm install` runs it, as it builds dist/; `npm run build:web` by hand):
 * esbuild bundles web/src/main.tsx with Preact, the signals and the typed client into hashed,
 * long-cacheable files under web/dist/assets/, and writes web/dist/manifest.json, from which the
 * server writes the app's HTML (its entry script, stylesheet and the chunks to preload).
 *
 *   node web/build.mjs             build
 *   node web/build.mjs --if-stale  only when a source is newer than the manifest
 *   node web/build.mjs --report    also print each output's size, raw and gzipped
 *
 * The first screen (the entry, the app it imports at once and their static imports: the
 * manifest's `firstScreen`) must stay within BUDGET_GZIP bytes of JavaScript, gzipped, and the
 * whole app (every page's chunk too) within BUDGET_TOTAL_GZIP (test/web/bundle-size.test.ts fails past either; the build prints both).
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";

const WEB = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.join(WEB, "dist");
const ASSETS = path.join(DIST, "assets");
const MANIFEST = path.join(DIST, "manifest.json");
/** Served at /static/web/<file>. */
const PUBLIC_PATH = "/static/web/";
export const BUDGET_GZIP = 100 * 1024;
export const BUDGET_TOTAL_GZIP = 150 * 1024;

/** Every file the bundle reads: this app's sources and the typed client's. */
function sources() {
  const out = [fileURLToPath(import.meta.url)];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else out.push(file);
    }
  };
  walk(path.join(WEB, "src"));
  walk(path.join(WEB, "..", "client", "src"));
  return out;
}

export function staleness() {
  if (!existsSync(MANIFEST)) return "no build yet";
  const builtAt = statSync(MANIFEST).mtimeMs;
  const newer = sources().find((f) => statSync(f).mtimeMs > builtAt);
  return newer ? `${path.relative(WEB, newer)} changed` : undefined;
}

/** The chunks `file` imports statically, and theirs, without `file`. */
function staticImports(outputs, file) {
  const out = [];
  const add = (f) => {
    for (const i of outputs[f].imports)
      if (
        i.kind === "import-statement" &&
        !i.external &&
        i.path !== file &&
        !out.includes(i.path)
      ) {
        out.push(i.path);
        add(i.path);
      }
  };
  add(file);
  return out;
}

/**
 * The stylesheets in one file, each distinct content once and in esbuild's order (esbuild writes
 * the CSS that src/app.tsx imports both as its chunk's and as the entry's, the same rules twice):
 * a module script runs only once the page's stylesheets are in, so one request rather than ten
 * ahead of the entry. The parts are removed; returns the file.
 */
function oneStylesheet(files) {
  const parts = [];
  for (const f of files) {
    const text = readFileSync(path.join(WEB, f), "utf8");
    if (!parts.includes(text)) parts.push(text);
    rmSync(path.join(WEB, f));
  }
  const css = parts.join("\n");
  const hash = createHash("sha256").update(css).digest("hex").slice(0, 8).toUpperCase();
  const file = path.join(ASSETS, `styles-${hash}.css`);
  writeFileSync(file, css);
  return file;
}

export async function build({ report = false } = {}) {
  const esbuild = await import("esbuild");
  rmSync(DIST, { recursive: true, force: true });
  mkdirSync(ASSETS, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: WEB,
    entryPoints: { app: "src/main.tsx" },
    outdir: ASSETS,
    bundle: true,
    splitting: true,
    format: "esm",
    target: ["chrome110", "firefox115", "safari16"],
    // WEB_MINIFY=0 keeps the app's names, for reading a CPU profile of the app in Chromium.
    minify: process.env.WEB_MINIFY !== "0",
    sourcemap: false,
    jsx: "automatic",
    jsxImportSource: "preact",
    entryNames: "[name]-[hash]",
    chunkNames: "chunk-[hash]",
    assetNames: "[name]-[hash]",
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
  });
  const outputs = result.metafile.outputs;
  const rel = (file) => PUBLIC_PATH + path.basename(file);
  const entryFile = Object.keys(outputs).find(
    (f) => outputs[f].entryPoint === "src/main.tsx" && f.endsWith(".js"),
  );
  if (!entryFile) throw new Error("esbuild produced no entry script");
  const js = Object.keys(outputs).filter((f) => f.endsWith(".js"));
  const appFile = js.find((f) => outputs[f].entryPoint === "src/app.tsx");
  if (!appFile) throw new Error("esbuild produced no chunk for src/app.tsx");
  const stylesheet = oneStylesheet(Object.keys(outputs).filter((f) => f.endsWith(".css")));
  const manifest = {
    entry: rel(entryFile),
    css: [rel(stylesheet)],
    // The chunks the entry imports statically (the typed client: it sends the registration),
    // fetched in parallel with it. Not the app's (src/app.tsx, imported once the registration is
    // sent): ahead of the entry in the page, 20 requests delayed it (and the registration) by
    // ~150 ms on a busy server; they load while the server prepares the registration.
    preload: staticImports(outputs, entryFile).map(rel),
    // What the first screen loads: the entry, those, and the app with its static imports.
    firstScreen: [],
    sizes: {},
  };
  manifest.firstScreen = [
    ...new Set([
      manifest.entry,
      ...manifest.preload,
      rel(appFile),
      ...staticImports(outputs, appFile)
        .filter((f) => f !== entryFile)
        .map(rel),
    ]),
  ];
  let gzipTotal = 0;
  let gzipFirst = 0;
  const first = new Set(manifest.firstScreen);
  const files = [...js, path.relative(WEB, stylesheet)];
  for (const file of files) {
    const bytes = readFileSync(path.join(WEB, file));
    const gzip = gzipSync(bytes, { level: 9 }).length;
    manifest.sizes[rel(file)] = { bytes: bytes.length, gzip };
    if (js.includes(file)) gzipTotal += gzip;
    if (first.has(rel(file))) gzipFirst += gzip;
  }
  manifest.jsGzipTotal = gzipTotal;
  manifest.jsGzipFirstScreen = gzipFirst;
  writeFileSync(MANIFEST, JSON.stringify(manifest, null, 2) + "\n");
  if (report)
    for (const [file, s] of Object.entries(manifest.sizes))
      console.log(`${file}  ${s.bytes} B, ${s.gzip} B gzipped`);
  console.log(
    `web app built: ${(gzipFirst / 1024).toFixed(1)} kB of JavaScript gzipped for the first screen (budget ${BUDGET_GZIP / 1024} kB), ${(gzipTotal / 1024).toFixed(1)} kB in all (budget ${BUDGET_TOTAL_GZIP / 1024} kB)`,
  );
  return manifest;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const ifStale = process.argv.includes("--if-stale");
  const why = staleness();
  if (ifStale && !why) process.exit(0);
  await build({ report: process.argv.includes("--report") });
}
