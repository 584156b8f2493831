/**
 * The web app's first load stays within its budget: at most 100 kB of JavaScript, gzipped, all
 * chunks counted (web/build.mjs measures each output of the build with gzip -9 and writes the
 * figures into web/dist/manifest.json, which test/helpers/global-setup.ts keeps current).
 */
import { existsSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const DIST = fileURLToPath(new URL("../../web/dist/", import.meta.url));
const BUDGET = 100 * 1024;

interface Manifest {
  entry: string;
  css: string[];
  preload: string[];
  sizes: Record<string, { bytes: number; gzip: number }>;
  jsGzipTotal: number;
}

describe("the web app's bundle", () => {
  const manifest = JSON.parse(readFileSync(`${DIST}manifest.json`, "utf8")) as Manifest;
  const fileOf = (url: string) => `${DIST}assets/${url.replace(/^\/static\/web\//, "")}`;

  it(`is at most ${BUDGET / 1024} kB of JavaScript gzipped, every chunk counted`, () => {
    const scripts = Object.keys(manifest.sizes).filter((f) => f.endsWith(".js"));
    expect(scripts).toContain(manifest.entry);
    // Measured again here, not taken from the manifest's word.
    const total = scripts.reduce(
      (sum, f) => sum + gzipSync(readFileSync(fileOf(f)), { level: 9 }).length,
      0,
    );
    expect(total).toBe(manifest.jsGzipTotal);
    console.log(
      `web app: ${(total / 1024).toFixed(1)} kB of JavaScript gzipped in ${scripts.length} file(s)`,
    );
    expect(total).toBeLessThanOrEqual(BUDGET);
  });

  it("names every asset by its content's hash, and every asset the page loads exists", () => {
    for (const url of [manifest.entry, ...manifest.css, ...manifest.preload]) {
      expect(url).toMatch(/^\/static\/web\/[a-z]+-[A-Z0-9]{8}\.(js|css)$/);
      expect(existsSync(fileOf(url))).toBe(true);
    }
  });
});
