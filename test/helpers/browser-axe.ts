/**
 * axe-core in a page of the web app: 0 serious or critical violations expected (the others are
 * printed). The page must bypass the Content-Security-Policy (`page.setBypassCSP(true)` before it
 * loads), since axe-core is injected as an inline script.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "puppeteer-core";
import { expect } from "vitest";

let source: string | undefined;

export async function expectNoSeriousAxeViolations(page: Page, where: string): Promise<void> {
  source ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: source });
  const results = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(): Promise<{
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
    const r = await axe.run();
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5),
    }));
  });
  console.log(
    `axe-core on ${where}: ${results.length} violation(s)` +
      results.map((v) => `\n  [${v.impact}] ${v.id}: ${v.help} (${v.nodes.join("; ")})`).join(""),
  );
  expect(
    results.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id),
    `serious or critical violations on ${where}`,
  ).toEqual([]);
}
