/**
 * docs/operations.md's "Several processes behind nginx" shows deploy/nginx.conf and deploy/chat@.service in
 * full: the copies must not drift from the files (test/cli/nginx.test.ts runs the file).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

describe("the deployment files shown in docs/operations.md", () => {
  const readme = read("docs/operations.md");
  it.each([
    ["deploy/nginx.conf", "nginx"],
    ["deploy/chat@.service", "ini"],
  ])("shows %s as it is", (path, lang) => {
    expect(readme).toContain(`\`${path}\`:\n\n\`\`\`${lang}\n${read(path)}\`\`\`\n`);
  });
});
