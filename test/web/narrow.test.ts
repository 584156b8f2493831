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
  matches,
  narrowOf,
  narrowTerms,
  narrowTitle,
  parseHash,
  parseSearch,
  searchText,
  type Directory,
  type Names,
  type View,
} from "../../web/src/narrow.ts";
import type { Msg } from "../../web/src/types.ts";

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

const dir: Directory = {
  ...names,
  channelId: (name) => ({ verona: 9, "core team": 10 })[name.toLowerCase()],
  userId: (s) =>
    ({ "hamlet@zulip.com": 8, "othello@zulip.com": 9, "iago@zulip.com": 10 })[s.toLowerCase()],
  userEmail: (id) => ({ 8: "hamlet@zulip.com", 9: "othello@zulip.com" })[id],
};

describe("search operators", () => {
  it("parses Zulip's operators, their synonyms, negation, quotes and + for spaces", () => {
    expect(
      parseSearch(
        'stream:Verona topic:"two words" -from:othello@zulip.com is:Unread has:link hello world',
        dir,
      ),
    ).toEqual({
      terms: [
        { operator: "channel", operand: "9" },
        { operator: "topic", operand: "two words" },
        { operator: "sender", operand: "9", negated: true },
        { operator: "is", operand: "unread" },
        { operator: "has", operand: "link" },
        { operator: "search", operand: "hello world" },
      ],
    });
    expect(parseSearch("channel:core+team near:42", dir)).toEqual({
      terms: [{ operator: "channel", operand: "10" }],
      near: 42,
    });
    expect(parseSearch("pm-with:othello@zulip.com,iago@zulip.com", dir).terms).toEqual([
      { operator: "dm", operand: "9,10" },
    ]);
    expect(parseSearch("is:private sender:me", dir).terms).toEqual([
      { operator: "is", operand: "dm" },
      { operator: "sender", operand: "me" },
    ]);
    // An unknown operator is free text; an unknown channel is sent by name.
    expect(parseSearch("foo:bar channel:Nowhere", dir).terms).toEqual([
      { operator: "channel", operand: "Nowhere" },
      { operator: "search", operand: "foo:bar" },
    ]);
  });

  it("gives the simple narrows their own kinds, and any other search a list of terms", () => {
    expect(narrowOf(parseSearch("channel:Verona", dir).terms)).toEqual({
      kind: "channel",
      streamId: 9,
    });
    expect(narrowOf(parseSearch("channel:Verona topic:greetings", dir).terms)).toEqual({
      kind: "topic",
      streamId: 9,
      topic: "greetings",
    });
    expect(narrowOf(parseSearch("tea time", dir).terms)).toEqual({
      kind: "search",
      query: "tea time",
    });
    expect(narrowOf(parseSearch("sender:othello@zulip.com", dir).terms)).toEqual({
      kind: "sender",
      userId: 9,
    });
    expect(narrowOf(parseSearch("-topic:greetings", dir).terms).kind).toBe("terms");
  });

  it.each<[string, string]>([
    [
      "channel:Verona sender:othello@zulip.com word",
      "#narrow/channel/9-Verona/sender/9-Othello,-the-Moor-of-Venice/search/word",
    ],
    ["channel:Verona -topic:greetings", "#narrow/channel/9-Verona/-topic/greetings"],
    ["is:unread has:image", "#narrow/is/unread/has/image"],
    ['topic:"a.b c" hello', "#narrow/topic/a.2Eb.20c/search/hello"],
    ["sender:othello@zulip.com", "#narrow/sender/9-Othello,-the-Moor-of-Venice"],
  ])("%s is %s, and back", (text, hash) => {
    const view: View = { narrow: narrowOf(parseSearch(text, dir).terms) };
    expect(hashOf(view, names)).toBe(hash);
    expect(parseHash(hash)).toEqual(view);
    expect(searchText(view.narrow, dir)).toBe(text);
  });

  it("sends the server ids as numbers, negation as negated", () => {
    expect(
      narrowTerms(
        narrowOf(parseSearch("channel:Verona -sender:othello@zulip.com x", dir).terms),
        8,
      ),
    ).toEqual([
      { operator: "channel", operand: 9 },
      { operator: "sender", operand: 9, negated: true },
      { operator: "search", operand: "x" },
    ]);
  });

  it("decides live messages where it can", () => {
    const msg = {
      id: 1,
      type: "stream",
      stream_id: 9,
      subject: "greetings",
      sender_id: 9,
      sender_email: "othello@zulip.com",
      flags: [],
      display_recipient: "Verona",
    } as unknown as Msg;
    const n = (text: string) => narrowOf(parseSearch(text, dir).terms);
    expect(matches(n("channel:Verona -topic:greetings"), msg, 8)).toBe(false);
    expect(matches(n("channel:Verona -topic:other sender:othello@zulip.com"), msg, 8)).toBe(true);
    expect(matches(n("channel:Verona hello"), msg, 8)).toBeUndefined();
    expect(matches(n("channel:Verona hello"), { ...msg, stream_id: 10 }, 8)).toBe(false);
  });

  it("titles a search by its text", () => {
    expect(narrowTitle(narrowOf(parseSearch("channel:Verona hello", dir).terms), dir)).toBe(
      "Search results for channel:Verona hello",
    );
  });
});
