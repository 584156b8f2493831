/**
 * `npm run build` (and `npm install`'s postinstall): compiles the server to plain JavaScript,
 * so that `npm start` runs it with `node` alone (no TypeScript loader in the process: less memory,
 * a faster start).
 *
 *   node server/tools/build.mjs             build dist/server/main.js and dist/server/manage.js
 *   node server/tools/build.mjs --if-stale  the same, only when a source is newer than the build
 *                                           (what `npm start` and `npm run manage` run first)
 *
 * esbuild bundles each entry with the modules it imports: this repository's (server/ and the
 * generated Prisma client) and the packages' (but for the few in EXTERNAL). The bundles sit two levels below
 * the repository root, as the modules that find files from `import.meta.url` do
 * (server/http/spec.ts, server/http/docs.ts, server/db/schema-engine.ts), so the same relative
 * paths hold in both. Plain JavaScript, so that checking for staleness costs no TypeScript loader.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const OUT_DIR = path.join(ROOT, "dist", "server");
/** Each bundle (dist/server/<name>.js) and its entry module. */
const ENTRIES = { main: "server/main.ts", manage: "server/manage/index.ts" };
const EXTERNAL = [
  "@electric-sql/pglite",
  "@prisma/schema-engine-wasm",
  "pino-pretty",
  "pg-native",
  "esbuild",
  "tsx",
  "prisma",
  // Password strength dictionaries (several MiB): loaded from node_modules on the first password
  // checked, not parsed with the bundle at every start.
  "@zxcvbn-ts/core",
  "@zxcvbn-ts/language-common",
  "@zxcvbn-ts/language-en",
  // Loaded on the first email sent (lib/email/transport.ts), not with the bundle at every start.
  "nodemailer",
  // Loaded only when S3_BUCKET is set (lib/uploads/upload-storage-s3.ts).
  "@aws-sdk/client-s3",
  "@aws-sdk/s3-request-presigner",
];
/** What the last build read: every bundled source (from esbuild's metafile), and this script. */
const INPUTS = path.join(ROOT, "dist", "inputs.json");

/** Why the build is stale, or undefined when every input is older than the bundles. */
export function staleness() {
  const outputs = Object.keys(ENTRIES).map((name) => path.join(OUT_DIR, `${name}.js`));
  if (!existsSync(INPUTS) || outputs.some((o) => !existsSync(o))) return "no build yet";
  const builtAt = Math.min(...outputs.map((o) => statSync(o).mtimeMs));
  for (const input of JSON.parse(readFileSync(INPUTS, "utf8"))) {
    const file = path.join(ROOT, input);
    if (!existsSync(file)) return `${input} is gone`;
    if (statSync(file).mtimeMs > builtAt) return `${input} changed`;
  }
  return undefined;
}

/**
 * The generated Prisma client imports its query compiler as an ES module whose only export is the
 * WebAssembly as a base64 string (2 MiB): a module that, once imported, is never released, and
 * with it that string and its source text. Loaded through require() and dropped from require's
 * cache once read, the string is garbage as soon as the module is compiled.
 */
const PRISMA_WASM_IMPORT =
  /await import\("(@prisma\/client\/runtime\/query_compiler_\w+_bg\.\w+\.wasm-base64)\.mjs"\)/g;
const prismaWasmOnce = {
  name: "prisma-wasm-once",
  setup(b) {
    b.onLoad({ filter: /generated[\\/]prisma[\\/]internal[\\/]class\.ts$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      if (!PRISMA_WASM_IMPORT.test(source))
        return {
          warnings: [
            {
              text: "the Prisma client's wasm import changed: it stays an ES module (more memory, nothing else)",
            },
          ],
        };
      const contents = source.replace(
        PRISMA_WASM_IMPORT,
        (_, id) =>
          `await (async () => { const { createRequire } = await import("node:module"); const require = createRequire(import.meta.url); const file = require.resolve("${id}.js"); try { return require(file); } finally { delete require.cache[file]; } })()`,
      );
      return { contents, loader: "ts" };
    });
  },
};

/** Anything esbuild leaves outside ASCII (a character in a regular expression) makes V8 keep the whole bundle's source as two bytes a character. */
const asciiOnly = (text) =>
  text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

export async function build() {
  const { build: esbuild } = await import("esbuild");
  const result = await esbuild({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
    outdir: OUT_DIR,
    bundle: true,
    // Packages are bundled too: resolving, reading and compiling some 300 modules of node_modules
    // one by one (and scanning each CommonJS one for its exports) was a third of the start-up.
    // These stay imports: they load files beside their own module (PGlite's and the schema
    // engine's WebAssembly), run only in development (pino-pretty), or are optional (pg-native).
    external: EXTERNAL,
    // Bundled CommonJS calls require() for Node's modules (and the packages above).
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
    platform: "node",
    format: "esm",
    target: "node20.19",
    sourcemap: "linked",
    metafile: true,
    // Whitespace only: names stay readable in stack traces (and the source map has the lines).
    minifyWhitespace: true,
    plugins: [prismaWasmOnce],
    write: false,
    logLevel: "warning",
  });
  mkdirSync(OUT_DIR, { recursive: true });
  for (const file of result.outputFiles)
    writeFileSync(file.path, file.path.endsWith(".js") ? asciiOnly(file.text) : file.contents);
  const inputs = [
    ...Object.keys(result.metafile.inputs),
    path.relative(ROOT, fileURLToPath(import.meta.url)),
    "package.json",
  ].sort();
  mkdirSync(path.dirname(INPUTS), { recursive: true });
  writeFileSync(INPUTS, JSON.stringify(inputs, null, 1) + "\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const ifStale = process.argv.includes("--if-stale");
  const why = staleness();
  if (!ifStale || why) {
    const t0 = performance.now();
    await build();
    console.error(
      `built dist/server/ (${Object.values(ENTRIES).join(", ")}) in ${Math.round(performance.now() - t0)} ms${why && ifStale ? `: ${why}` : ""}`,
    );
  }
}
