/**
 * The web app stays within its budgets (issue 33): at most 100 kB of JavaScript, gzipped, for the
 * first screen (the manifest's `firstScreen`: the entry, the app, src/app.tsx, it imports once the
 * registration is sent, and their static imports), 150 kB in all, every page's chunk counted
 * (web/build.mjs measures each output of the build with gzip -9 and writes the figures into
 * web/dist/manifest.json, which test/helpers/global-setup.ts keeps current).
 */
import { existsSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const DIST = fileURLToPath(new URL("../../web/dist/", import.meta.url));
const BUDGET = 100 * 1024;
const BUDGET_TOTAL = 150 * 1024;

interface Manifest {
  entry: string;
  css: string[];
  preload: string[];
  firstScreen: string[];
  sizes: Record<string, { bytes: number; gzip: number }>;
  jsGzipTotal: number;
  jsGzipFirstScreen: number;
}

describe("the web app's bundle", () => {
  const manifest = JSON.parse(readFileSync(`${DIST}manifest.json`, "utf8")) as Manifest;
  const fileOf = (url: string) => `${DIST}assets/${url.replace(/^\/static\/web\//, "")}`;

  it(`is at most ${BUDGET / 1024} kB of JavaScript gzipped for the first screen, ${BUDGET_TOTAL / 1024} kB in all`, () => {
    const scripts = Object.keys(manifest.sizes).filter((f) => f.endsWith(".js"));
    expect(scripts).toContain(manifest.entry);
    // Measured again here, not taken from the manifest's word.
    const total = scripts.reduce(
      (sum, f) => sum + gzipSync(readFileSync(fileOf(f)), { level: 9 }).length,
      0,
    );
    expect(total).toBe(manifest.jsGzipTotal);
    expect(manifest.firstScreen).toContain(manifest.entry);
    for (const f of manifest.preload) expect(manifest.firstScreen).toContain(f);
    const first = manifest.firstScreen.reduce(
      (sum, f) => sum + gzipSync(readFileSync(fileOf(f)), { level: 9 }).length,
      0,
    );
    expect(first).toBe(manifest.jsGzipFirstScreen);
    console.log(
      `web app: ${(first / 1024).toFixed(1)} kB of JavaScript gzipped for the first screen, ${(total / 1024).toFixed(1)} kB in ${scripts.length} file(s)`,
    );
    expect(first).toBeLessThanOrEqual(BUDGET);
    expect(total).toBeLessThanOrEqual(BUDGET_TOTAL);
  });

  it("names every asset by its content's hash, and every asset the page loads exists", () => {
    for (const url of [
      manifest.entry,
      ...manifest.css,
      ...manifest.preload,
      ...manifest.firstScreen,
    ]) {
      expect(url).toMatch(/^\/static\/web\/[a-z]+-[A-Z0-9]{8}\.(js|css)$/);
      expect(existsSync(fileOf(url))).toBe(true);
    }
  });
});
