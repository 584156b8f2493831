/**
 * axe-core in a page of the web app (as test/browser/web-security.test.ts runs it): the page must
 * bypass the app's Content-Security-Policy (`page.setBypassCSP(true)` before it loads), since axe
 * is injected as an inline script. Returns the violations, printed; tests expect no serious or
 * critical one.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "puppeteer-core";
import { expect } from "vitest";

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/** `context`: a CSS selector of the part to audit (default: the whole document). */
export async function axeViolations(
  page: Page,
  where: string,
  context?: string,
): Promise<AxeViolation[]> {
  const loaded = await page.evaluate(() => "axe" in globalThis);
  if (!loaded) await page.addScriptTag({ content: axeSource });
  const results = await page.evaluate(async (ctx) => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(context?: string): Promise<{
            violations: {
              id: string;
              impact: string;
              help: string;
              nodes: { target: string[] }[];
            }[];
          }>;
        };
      }
    ).axe;
    const r = await axe.run(ctx ?? undefined);
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5),
    }));
  }, context ?? null);
  if (results.length)
    console.log(
      `axe-core on ${where}: ${results.length} violation(s)` +
        results.map((v) => `\n  [${v.impact}] ${v.id}: ${v.help} (${v.nodes.join("; ")})`).join(""),
    );
  return results;
}

/** The ids of the serious or critical violations (what tests expect to be empty). */
export async function seriousAxeViolations(
  page: Page,
  where: string,
  context?: string,
): Promise<string[]> {
  return (await axeViolations(page, where, context))
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => v.id);
}

/** Fails the test on any serious or critical violation (the others are printed). */
export async function expectNoSeriousAxeViolations(
  page: Page,
  where: string,
  context?: string,
): Promise<void> {
  expect(
    await seriousAxeViolations(page, where, context),
    `serious or critical violations on ${where}`,
  ).toEqual([]);
}
