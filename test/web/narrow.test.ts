/**
 * The web app's URL fragments, as Zulip's web app writes and reads them (web/src/hash_util.ts):
 * each view survives a round trip through its fragment, Zulip's own links parse, and the
 * server's narrow terms follow from the view.
 */
import { describe, expect, it } from "vitest";
import {
  decodeHashComponent,
  encodeHashComponent,
  hashOf,
  narrowTerms,
  parseHash,
  type Names,
  type View,
} from "../../web/src/narrow.ts";

const names: Names = {
  channelName: (id) => ({ 9: "Verona", 10: "core team" })[id],
  userName: (id) => ({ 8: "King Hamlet", 9: "Othello, the Moor of Venice" })[id],
  myId: 8,
};

describe("narrow fragments", () => {
  it("encodes as Zulip's encodeHashComponent: dots for percent signs", () => {
    expect(encodeHashComponent("my topic (v1.2)")).toBe("my.20topic.20.28v1.2E2.29");
    expect(decodeHashComponent("my.20topic.20.28v1.2E2.29")).toBe("my topic (v1.2)");
    expect(decodeHashComponent("bad.zz")).toBe("bad.zz");
  });

  it.each<[View, string]>([
    [{ narrow: { kind: "all" } }, "#feed"],
    [{ narrow: { kind: "channel", streamId: 9 } }, "#narrow/channel/9-Verona"],
    [{ narrow: { kind: "channel", streamId: 10 } }, "#narrow/channel/10-core-team"],
    [
      { narrow: { kind: "topic", streamId: 9, topic: "greetings" } },
      "#narrow/channel/9-Verona/topic/greetings",
    ],
    [
      { narrow: { kind: "topic", streamId: 9, topic: "a.b c" } },
      "#narrow/channel/9-Verona/topic/a.2Eb.20c",
    ],
    [{ narrow: { kind: "dm", userIds: [9] } }, "#narrow/dm/9-Othello,-the-Moor-of-Venice"],
    [{ narrow: { kind: "dm", userIds: [9, 10] } }, "#narrow/dm/9,10-group"],
    [{ narrow: { kind: "mentioned" } }, "#narrow/is/mentioned"],
    [{ narrow: { kind: "starred" } }, "#narrow/is/starred"],
    [{ narrow: { kind: "search", query: "tea time" } }, "#narrow/search/tea.20time"],
    [{ narrow: { kind: "all" }, near: 42 }, "#narrow/near/42"],
    [
      { narrow: { kind: "topic", streamId: 9, topic: "greetings" }, near: 42 },
      "#narrow/channel/9-Verona/topic/greetings/near/42",
    ],
  ])("%j is %s, and back", (view, hash) => {
    expect(hashOf(view, names)).toBe(hash);
    expect(parseHash(hash)).toEqual(view);
  });

  it("reads Zulip's older and other spellings", () => {
    expect(parseHash("#all_messages")).toEqual({ narrow: { kind: "all" } });
    expect(parseHash("#narrow/stream/9-Verona/subject/greetings")).toEqual({
      narrow: { kind: "topic", streamId: 9, topic: "greetings" },
    });
    expect(parseHash("#narrow/pm-with/9-pm")).toEqual({ narrow: { kind: "dm", userIds: [9] } });
    expect(parseHash("#narrow/channel/9-Verona/topic/greetings/with/17")).toEqual({
      narrow: { kind: "topic", streamId: 9, topic: "greetings" },
      near: 17,
    });
    expect(parseHash("#settings/profile")).toBeUndefined();
    expect(parseHash("#narrow/bogus/1")).toBeUndefined();
  });

  it("gives the server's terms for each view", () => {
    expect(narrowTerms({ kind: "all" }, 8)).toEqual([]);
    expect(narrowTerms({ kind: "topic", streamId: 9, topic: "greetings" }, 8)).toEqual([
      { operator: "channel", operand: 9 },
      { operator: "topic", operand: "greetings" },
    ]);
    expect(narrowTerms({ kind: "dm", userIds: [9, 8] }, 8)).toEqual([
      { operator: "dm", operand: [9] },
    ]);
    expect(narrowTerms({ kind: "dm", userIds: [8] }, 8)).toEqual([
      { operator: "dm", operand: [8] },
    ]);
    expect(narrowTerms({ kind: "mentioned" }, 8)).toEqual([
      { operator: "is", operand: "mentioned" },
    ]);
  });
});
