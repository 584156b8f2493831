/**
 * Ends the run with each file's duration, slowest first (what to look at when CI gets slow),
 * then the plain `N passed, N failed, N skipped` line that CI reads as the run's result (vitest's
 * own summary is not one of the formats it recognises). That line is the run's last.
 */
import type { Reporter, TestModule } from "vitest/node";

export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const durations: [ms: number, file: string, state: string][] = [];
    for (const module of testModules) {
      // A file that fails to load has no tests; count it as a failure so the run cannot pass.
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed++;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      // A file's time: setting up, importing it (with what it imports), its tests and hooks.
      const d = module.diagnostic();
      const ms =
        d.environmentSetupDuration +
        d.prepareDuration +
        d.setupDuration +
        d.collectDuration +
        d.duration;
      durations.push([ms, module.moduleId, module.state()]);
    }
    failed += unhandledErrors.length;
    const out: string[] = [];
    if (durations.length > 0) {
      const root = process.cwd() + "/";
      const total = durations.reduce((sum, [ms]) => sum + ms, 0);
      out.push(`\nDurations per file, slowest first (sum ${(total / 1000).toFixed(1)} s):`);
      for (const [ms, file, state] of durations.sort((a, b) => b[0] - a[0]))
        out.push(
          `${(ms / 1000).toFixed(1).padStart(7)} s  ${file.startsWith(root) ? file.slice(root.length) : file}${state === "failed" ? "  (failed)" : ""}`,
        );
    }
    out.push(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    process.stdout.write(out.join("\n"));
  }
}
