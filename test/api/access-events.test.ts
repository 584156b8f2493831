/**
 * The read-path matrix's events: which users' queues get each event that carries a channel
 * message's data (message, update_message, reaction, delete_message, update_message_flags,
 * typing) or a channel's (stream), in every situation of test/helpers/access.ts. A queue is
 * registered by each user before anything is sent; desdemona then sends, edits, reacts, types,
 * changes the description and deletes. No event may reach a user who neither received the
 * message nor may read it (or see the channel, for `stream`).
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  KINDS,
  ROLES,
  WHO,
  access,
  createAccessChannels,
  metadata,
  received,
  subscribed,
  type Fixture,
  type Kind,
  type Who,
} from "../helpers/access.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer({ webPublicStreamsEnabled: true });
let fixtures: Map<Kind, Fixture>;
const queues = new Map<Who, () => Promise<any[]>>();
const events = new Map<Who, any[]>();

const TYPES = [
  "message",
  "update_message",
  "reaction",
  "delete_message",
  "update_message_flags",
  "typing",
  "stream",
];

beforeAll(async () => {
  fixtures = await createAccessChannels(server, async () => {
    for (const who of WHO)
      queues.set(who, await queueOf(server, who, TYPES, { stream_typing_notifications: true }));
  });
  const desdemona = server.as("desdemona");
  for (const f of fixtures.values()) {
    const message_id = f.messageId;
    await expectSuccess(
      desdemona.PATCH("/messages/{message_id}", {
        params: { path: { message_id } },
        body: { content: `An edited ${f.word}` },
      }),
    );
    await expectSuccess(
      desdemona.POST("/messages/{message_id}/reactions", {
        params: { path: { message_id } },
        body: { emoji_name: "octopus" },
      }),
    );
    await expectSuccess(
      desdemona.POST("/typing", {
        body: { type: "channel", op: "start", stream_id: f.channelId, topic: f.topic },
      }),
    );
    await expectSuccess(
      desdemona.PATCH("/streams/{stream_id}", {
        params: { path: { stream_id: f.channelId } },
        body: { description: `About ${f.kind}` },
      }),
    );
    await expectSuccess(
      desdemona.DELETE("/messages/{message_id}", { params: { path: { message_id: f.secondId } } }),
    );
  }
  for (const who of WHO) events.set(who, await queues.get(who)!());
});

interface Row {
  event: string;
  /** Whether this event names the fixture's message or channel. */
  names(event: any, f: Fixture): boolean;
  want(kind: Kind, who: Who): boolean;
}

/** Those Zulip tells of an edit (do_update_message): its rows' users, and with shared history the current subscribers. */
const toldOfChange = (k: Kind, w: Who) => received(k, w) || (k !== "protected" && subscribed(k, w));
/**
 * Those Zulip tells of a reaction or a deletion (event_recipient_ids_for_action_on_messages,
 * aligned with has_message_access): the subscribers (with a row, for protected history), and
 * for a public channel the non-guests with a row.
 */
const toldOfAction = (k: Kind, w: Who) =>
  k === "protected"
    ? subscribed(k, w) && received(k, w)
    : k === "shared"
      ? subscribed(k, w)
      : subscribed(k, w) || (received(k, w) && w !== "polonius");

const ROWS: Row[] = [
  {
    event: "message",
    names: (e, f) => e.type === "message" && e.message.id === f.messageId,
    want: received,
  },
  {
    event: "update_message",
    names: (e, f) => e.type === "update_message" && e.message_ids?.includes(f.messageId),
    want: toldOfChange,
  },
  {
    event: "reaction",
    names: (e, f) => e.type === "reaction" && e.message_id === f.messageId,
    want: toldOfAction,
  },
  {
    event: "delete_message",
    names: (e, f) =>
      e.type === "delete_message" && (e.message_ids ?? [e.message_id]).includes(f.secondId),
    want: toldOfAction,
  },
  {
    // Only to the user whose flags changed (here: othello's and prospero's stars).
    event: "update_message_flags",
    names: (e, f) => e.type === "update_message_flags" && e.messages.includes(f.messageId),
    want: received,
  },
  {
    event: "typing",
    names: (e, f) => e.type === "typing" && e.stream_id === f.channelId,
    want: subscribed,
  },
  {
    event: "stream update",
    names: (e, f) => e.type === "stream" && e.op === "update" && e.stream_id === f.channelId,
    want: metadata,
  },
];

describe("the read-path matrix: events", () => {
  for (const row of ROWS)
    it(row.event, () => {
      const wrong: string[] = [];
      for (const kind of KINDS)
        for (const who of WHO) {
          const got = events.get(who)!.some((e) => row.names(e, fixtures.get(kind)!));
          const want = row.want(kind, who);
          if (got !== want)
            wrong.push(`${kind} / ${who} (${ROLES[who]}): got ${got}, Zulip ${want}`);
        }
      expect(wrong).toEqual([]);
    });

  it("never gives an event naming a message to someone who neither received nor may read it", () => {
    const wrong: string[] = [];
    for (const kind of KINDS)
      for (const who of WHO) {
        const f = fixtures.get(kind)!;
        if (received(kind, who) || access(kind, who)) continue;
        // (The channel's description names the word too; `stream` events follow the channel's metadata.)
        const leaked = events
          .get(who)!
          .filter((e) => e.type !== "stream" && JSON.stringify(e).includes(f.word));
        if (leaked.length) wrong.push(`${kind} / ${who}: ${JSON.stringify(leaked)}`);
      }
    expect(wrong).toEqual([]);
  });
});
