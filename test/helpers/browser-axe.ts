/**
 * axe-core in a page of the web app (as test/browser/web-security.test.ts runs it): the page must
 * bypass the Content-Security-Policy (`page.setBypassCSP(true)` before it loads), since axe is
 * injected as an inline script. Resolves with the serious and critical violations' ids, after
 * printing every violation found.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "puppeteer-core";

let axeSource: string | undefined;

export async function seriousAxeViolations(page: Page, where: string): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await page.addScriptTag({ content: axeSource });
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
  return results.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id);
}
