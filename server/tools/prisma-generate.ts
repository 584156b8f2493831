// Runs `prisma generate --schema prisma/schema.prisma` offline.
//
// The Prisma CLI tries to download the native schema engine before
// generating, although generation never runs it; pointing
// PRISMA_SCHEMA_ENGINE_BINARY at any existing file (here: the node binary)
// skips the download. Output: generated/prisma (see the generator block).
//
//   node --import tsx server/tools/prisma-generate.ts          # generate
//   node --import tsx server/tools/prisma-generate.ts --check  # exit 1 if stale
//
// Also importable: `await prismaGenerate()` / `await prismaGenerateCheck()`.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SCHEMA = path.join(ROOT, "prisma", "schema.prisma");
const OUTPUT = path.join(ROOT, "generated", "prisma");

function prismaCli(): string {
  return createRequire(import.meta.url).resolve("prisma/build/index.js");
}

function run(schemaPath: string, quiet: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [prismaCli(), "generate", "--schema", schemaPath, "--no-hints"],
      {
        cwd: ROOT,
        stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit",
        env: {
          ...process.env,
          PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || process.execPath,
          PRISMA_HIDE_UPDATE_MESSAGE: "1",
          CHECKPOINT_DISABLE: "1",
        },
      },
    );
    let out = "";
    child.stdout?.on("data", (d) => (out += d));
    child.stderr?.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`prisma generate exited with ${code}\n${out}`)),
    );
  });
}

/** Generates the client into generated/prisma. */
export async function prismaGenerate(opts: { quiet?: boolean } = {}): Promise<void> {
  await run(SCHEMA, opts.quiet ?? false);
}

/**
 * Generates into a temporary directory and compares with generated/prisma.
 * Returns the list of differing files (empty = up to date).
 */
export async function prismaGenerateCheck(): Promise<string[]> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "prisma-gen-check-"));
  try {
    const out = path.join(tmp, "out");
    const original = readFileSync(SCHEMA, "utf8");
    const outputDecl = /(\boutput\s*=\s*)"([^"]*)"/.exec(original);
    if (!outputDecl) throw new Error("no output in the generator block");
    const schema = original.replace(outputDecl[0], `${outputDecl[1]}"${out}"`);
    const tmpSchema = path.join(tmp, "schema.prisma");
    writeFileSync(tmpSchema, schema);
    await run(tmpSchema, true);
    // The generated client embeds the schema text, which names the output.
    return diffTrees(out, OUTPUT, (text) => text.split(out).join(outputDecl[2]));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function listFiles(dir: string, base = dir): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? listFiles(full, base) : [path.relative(base, full)];
  });
}

function diffTrees(a: string, b: string, normalizeA: (text: string) => string): string[] {
  const fa = new Set(listFiles(a));
  const fb = new Set(listFiles(b));
  const diff: string[] = [];
  for (const f of new Set([...fa, ...fb])) {
    if (!fa.has(f) || !fb.has(f)) diff.push(f);
    else if (
      normalizeA(readFileSync(path.join(a, f), "utf8")) !== readFileSync(path.join(b, f), "utf8")
    ) {
      diff.push(f);
    }
  }
  return diff.sort();
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    if (process.argv.includes("--check")) {
      const stale = await prismaGenerateCheck();
      if (stale.length) {
        console.error(
          `generated/prisma is stale (${stale.length} files differ: ${stale.slice(0, 5).join(", ")}…); run npm run gen`,
        );
        process.exit(1);
      }
      console.log("generated/prisma is up to date");
    } else {
      await prismaGenerate();
    }
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}
