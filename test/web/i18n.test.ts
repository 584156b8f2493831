/**
 * The app's words are in one catalogue (web/src/i18n/messages.json), current with the sources:
 * every `t("…")` of web/src is in it and nothing else is (`npm run i18n:extract` rewrites it).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module of the web build's tools, without types.
import { CATALOGUE, extract } from "../../web/i18n-extract.mjs";

describe("the web app's message catalogue", () => {
  it("lists exactly the strings the sources pass to t()", () => {
    const current = JSON.parse(readFileSync(CATALOGUE as string, "utf8")) as Record<
      string,
      string[]
    >;
    const fresh = JSON.parse((extract as () => string)()) as Record<string, string[]>;
    expect(Object.keys(current)).toEqual(Object.keys(fresh));
    expect(current).toEqual(fresh);
    expect(Object.keys(fresh).length).toBeGreaterThan(10);
  });
});
