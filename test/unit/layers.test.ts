/**
 * The layer rules of `npm run lint` (.dependency-cruiser.cjs) hold on the server, and they do
 * fail: a small tree shaped like server/ with one violation of each rule is cruised with the
 * same rules, and each is reported.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cruise, type ICruiseOptions, type IForbiddenRuleType } from "dependency-cruiser";

const ROOT = path.resolve(import.meta.dirname, "../..");
const config = createRequire(import.meta.url)(path.join(ROOT, ".dependency-cruiser.cjs")) as {
  forbidden: IForbiddenRuleType[];
  options: ICruiseOptions;
};

/** The rules' violations in the tree under baseDir (its server/ folder). */
async function violations(baseDir: string) {
  // The tsconfig only maps how TypeScript resolves; these relative `.ts` imports need none.
  const { tsConfig: _tsConfig, ...options } = config.options;
  const result = await cruise(["server"], {
    ...options,
    baseDir,
    validate: true,
    ruleSet: { forbidden: config.forbidden },
  });
  if (typeof result.output === "string") throw new Error(result.output);
  return result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
}

const fixture = mkdtempSync(path.join(tmpdir(), "layers-"));
afterAll(() => rmSync(fixture, { recursive: true, force: true }));

function file(relative: string, text: string) {
  mkdirSync(path.dirname(path.join(fixture, relative)), { recursive: true });
  writeFileSync(path.join(fixture, relative), text);
}

describe("the server's layers (npm run lint)", () => {
  it("hold on the server as it is", async () => {
    expect(await violations(ROOT)).toEqual([]);
  }, 120_000);

  it("report a lower layer importing a higher one, a circle, a handler importing a handler, a handler's query and http/ calling an action", async () => {
    file("server/errors.ts", "export const E = 1;\n");
    file("server/db/index.ts", 'import { E } from "../errors.ts";\nexport const db = E;\n');
    file(
      "server/lib/users/users.ts",
      'import { h } from "../../handlers/users.ts";\nexport const u = h;\n',
    );
    file("server/lib/a.ts", 'import { b } from "./b.ts";\nexport const a = b;\n');
    file("server/lib/b.ts", 'import { a } from "./a.ts";\nexport const b = () => a;\n');
    file("server/actions/users/users.ts", "export const act = 1;\n");
    file(
      "server/http/form.ts",
      'import { act } from "../actions/users/users.ts";\nexport const f = act;\n',
    );
    file("server/handlers/channels.ts", "export const c = 1;\n");
    file(
      "server/handlers/users.ts",
      'import { c } from "./channels.ts";\nimport { db } from "../db/index.ts";\nexport const h = c + db;\n',
    );
    expect((await violations(fixture)).sort()).toEqual(
      [
        "handlers-do-not-query: server/handlers/users.ts → server/db/index.ts",
        "http-does-not-change: server/http/form.ts → server/actions/users/users.ts",
        "layer-lib: server/lib/users/users.ts → server/handlers/users.ts",
        "no-circular: server/lib/a.ts → server/lib/b.ts",
        "no-handler-to-handler: server/handlers/users.ts → server/handlers/channels.ts",
      ].sort(),
    );
  }, 60_000);
});
