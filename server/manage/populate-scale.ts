/**
 * `populate-scale`: an organization of N messages (default 1,000,000) in realistic shapes, to
 * measure what the read paths cost at scale (test/bench/scale.ts). The users, channels,
 * subscriptions and direct-message groups are made by the app's own actions (doCreateUser,
 * doCreateChannel, doSubscribe, directRecipient), so they are what the app would have made; the
 * messages and everything per message are set-based, a fixed number of statements whatever N:
 *
 * - a plan of N messages in a temporary table (kind, conversation, topic, sender, words, mention,
 *   link…), drawn with random() (seeded: `--seed`) from Zipf-like laws: a channel k of C is chosen
 *   with probability ≈ 1/k, a topic t of a channel's T likewise, and so is each word of the
 *   content (so a few words are common and most rare);
 * - the messages from the plan in one INSERT, with ids reserved from the sequence (the table is
 *   locked meanwhile) so each plan row knows its message; `search_tsvector` is the generated
 *   column, computed by the database;
 * - every recipient's `user_message` row in one INSERT, with the flags the app would set: read for
 *   the sender and for about 6 in 7 of the others, mentioned / wildcard-mentioned / has_alert_word
 *   (for users who have the alert word) / is_private from the message, starred now and then;
 * - uploads for the messages that link one, reactions, followed and muted topics, muted channels,
 *   and the counters the app keeps (stream.first_message_id; subscriber_count by doSubscribe);
 * - then ANALYZE, as autovacuum would after such an insert.
 */
import type { AppDeps } from "../context.ts";
import { doCreateChannel } from "../actions/channels/channels.ts";
import { directRecipient } from "../actions/messages/messages.ts";
import { doCreateOrganization } from "../actions/realm/realm.ts";
import { doSubscribe } from "../actions/channels/subscriptions.ts";
import { doCreateUser } from "../actions/users/users.ts";
import { JsonableError } from "../errors.ts";
import { clientIdFor } from "../lib/clients.ts";
import { FLAG_BITS } from "../lib/messages/messages.ts";
import { fakeEmailDomain } from "../lib/realm/realm.ts";
import { RESOLVED_TOPIC_PREFIX, TopicVisibility } from "../lib/messages/topics.ts";
import { Role } from "../lib/users/users.ts";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { labelled, reachHints, UsageError, type Command, type Values } from "./cli.ts";
import {
  credentialOf,
  realmCredential,
  type Credential,
  type RealmCredential,
} from "./populate-db.ts";

export interface ScaleOptions {
  messages: number;
  users: number;
  channels: number;
  stringId: string;
  seed: number;
  /** Progress lines (to stderr). */
  progress?: (line: string) => void;
}

/** Defaults that grow with N: about one user per 1,000 messages, one channel per 10,000. */
export function scaleDefaults(messages: number): { users: number; channels: number } {
  return {
    users: Math.max(30, Math.min(1000, Math.round(messages / 1000))),
    channels: Math.max(10, Math.min(100, Math.round(messages / 10000))),
  };
}

/**
 * The vocabulary, most common first: a word's rank r is drawn with probability ≈ 1/r. "zebra" is
 * not in it: SCALE_RARE_WORD marks exactly six messages. SCALE_ALERT_WORD is a rare one, the
 * alert word of every tenth user.
 */
const WORDS = (
  "the to and of a is in that it for on you this we be with have are not but can just so what if from all at do one about or like " +
  "think would there will my was they get know out time which an up some when more no people see good make any also then should as " +
  "new way work because how thanks use me now need right our here than could by only something even want first much other well " +
  "message server topic channel release test code change issue question help idea version update meeting review branch commit " +
  "client mobile web design team user users email stream search bug fix feature docs api build deploy check error problem data " +
  "page link file image upload notification setting settings account login password profile group admin moderator guest member " +
  "week today tomorrow yesterday morning evening plan project schedule status report draft proposal decision discussion thread " +
  "python typescript javascript django react node database query index table column row migration schema backup restore cache " +
  "memory performance latency throughput benchmark profile trace debug log warning failure crash retry timeout queue event worker " +
  "postgres network socket proxy nginx docker container kubernetes cluster node cloud region storage disk volume snapshot archive " +
  "keyboard mouse screen monitor laptop phone tablet browser firefox chrome safari android ios linux windows macos terminal shell " +
  "coffee lunch dinner weekend holiday vacation travel flight train hotel conference talk slides video recording podcast article " +
  "garden river mountain forest ocean island desert valley canyon glacier volcano meadow prairie tundra savanna lagoon harbor " +
  "violin guitar piano trumpet cello flute drums harp clarinet saxophone oboe banjo ukulele accordion harmonica tuba bassoon"
).split(" ");
export const SCALE_RARE_WORD = "zebra";
export const SCALE_COMMON_WORD = "release";
export const SCALE_ALERT_WORD = "postgres";
/** How many messages carry the rare word. */
const RARE_HITS = 6;

const EMOJI: [name: string, code: string][] = [
  ["+1", "1f44d"],
  ["tada", "1f389"],
  ["heart", "2764"],
  ["smile", "1f604"],
  ["eyes", "1f440"],
];

export interface ScaleResult {
  realm: RealmCredential;
  /** The owner; `reader`: the member subscribed to the biggest channels, whose reads the bench times. */
  users: Record<"owner" | "reader" | "partner", Credential>;
  counts: Record<string, number>;
  seconds: number;
}

export async function populateScale(deps: AppDeps, options: ScaleOptions): Promise<ScaleResult> {
  const started = performance.now();
  const say = options.progress ?? (() => {});
  const step = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const result = await fn();
    say(`  ${label}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    return result;
  };
  const { messages: N, users: U, channels: C, seed } = options;
  const domain = `${options.stringId}.example.com`;

  const { realm, owner } = await step("organization", () =>
    doCreateOrganization(deps, {
      name: `Scale ${N}`,
      stringId: options.stringId,
      owner: { email: `owner@${domain}`, fullName: "Scale Owner", passwordHash: null },
    }),
  );
  const clientId = await clientIdFor(deps.db, "populate_scale");

  const result = await deps.db.$transaction(
    async (tx) => {
      const sql = (text: string, ...params: unknown[]) => tx.$executeRawUnsafe(text, ...params);
      await tx.$queryRawUnsafe("SELECT setseed($1::float8)::text", ((seed % 2000) - 1000) / 1000);

      // Users: user 1 (the reader) is in every big channel, user 2 (the partner) their most frequent correspondent.
      const users = await step(`${U} users`, async () => {
        const emailDomain = await fakeEmailDomain(tx, realm, deps.config);
        const made = [];
        for (let i = 1; i <= U; i++)
          made.push(
            await doCreateUser(
              tx,
              realm,
              {
                email: `user${i}@${domain}`,
                fullName: `User ${i}`,
                role: i % 97 === 0 ? Role.MODERATOR : i % 53 === 0 ? Role.GUEST : Role.MEMBER,
              },
              emailDomain,
            ),
          );
        return made;
      });
      const members = users.filter((u) => u.role !== Role.GUEST);

      // Channels: k = 1 … C, subscribers ≈ 24/√k (at least 3); the reader in the first half, the
      // owner in all. Every tenth is private (shared history), every twentieth protected history.
      const channels = await step(`${C} channels and their subscriptions`, async () => {
        const made: { k: number; streamId: number; recipientId: number; subs: number[] }[] = [];
        for (let k = 1; k <= C; k++) {
          const inviteOnly = k % 10 === 5;
          const stream = await doCreateChannel(tx, realm.id, {
            name: `${WORDS[(k * 7) % WORDS.length]}-${k}`,
            description: `Channel ${k} of the scale fixture`,
            inviteOnly,
            historyPublicToSubscribers: !(inviteOnly && k % 20 === 15),
            creatorId: owner.id,
          });
          const size = Math.max(3, Math.min(U, Math.round(24 / Math.sqrt(k))));
          const pool = inviteOnly ? members : users;
          const subs = new Set<number>([owner.id]);
          if (k <= Math.ceil(C / 2)) subs.add(users[0]!.id);
          for (let j = 0; subs.size < size + 1 && j < pool.length * 2; j++)
            subs.add(pool[(k * 131 + j * 977) % pool.length]!.id);
          await doSubscribe(tx, realm.id, stream, [...subs]);
          made.push({ k, streamId: stream.id, recipientId: stream.recipientId!, subs: [...subs] });
        }
        return made;
      });

      // Group direct messages: 3 to 6 members, the reader in every other one.
      const G = Math.max(5, Math.round(U / 10));
      const groups = await step(`${G} direct-message groups`, async () => {
        const made: { gi: number; recipientId: number; members: number[] }[] = [];
        const seen = new Set<string>();
        for (let gi = 1; made.length < G && gi < G * 10; gi++) {
          const size = 3 + (gi % 4);
          const ids = new Set<number>(gi % 2 ? [users[0]!.id] : []);
          for (let j = 0; ids.size < size; j++) ids.add(users[(gi * 193 + j * 389) % U]!.id);
          const key = [...ids].sort((a, b) => a - b).join(",");
          if (seen.has(key)) continue;
          seen.add(key);
          const [sender, ...others] = users.filter((u) => ids.has(u.id));
          const { recipientId, memberIds } = await directRecipient(tx, realm.id, sender!, others);
          made.push({ gi: made.length + 1, recipientId, members: memberIds });
        }
        return made;
      });

      await step("alert words", () =>
        sql(
          `INSERT INTO alert_word (realm_id, user_profile_id, word) SELECT $1, u, $2 FROM unnest($3::int[]) AS u`,
          realm.id,
          SCALE_ALERT_WORD,
          users.filter((_, i) => i % 10 === 0).map((u) => u.id),
        ),
      );

      // The plan: one row per message.
      await step("plan", async () => {
        await sql(
          `CREATE TEMP TABLE scale_user (i int PRIMARY KEY, id int, recipient_id int, full_name text) ON COMMIT DROP`,
        );
        await sql(
          `INSERT INTO scale_user SELECT t.i, t.id, t.r, t.n FROM unnest($1::int[], $2::int[], $3::text[]) WITH ORDINALITY AS t(id, r, n, i)`,
          users.map((u) => u.id),
          users.map((u) => u.recipientId),
          users.map((u) => u.fullName),
        );
        await sql(
          `CREATE TEMP TABLE scale_channel (k int PRIMARY KEY, recipient_id int, subs int[], topics int) ON COMMIT DROP`,
        );
        // A channel's expected share of the channel messages is ln((k+1)/k)/ln(C+1): about 30 messages per topic.
        await sql(
          `INSERT INTO scale_channel SELECT t.k, t.r, ARRAY(SELECT (s.value)::int FROM jsonb_array_elements_text(t.subs) s), 0
           FROM jsonb_to_recordset($1::jsonb) AS t(k int, r int, subs jsonb)`,
          JSON.stringify(channels.map((c) => ({ k: c.k, r: c.recipientId, subs: c.subs }))),
        );
        await sql(
          `UPDATE scale_channel SET topics = greatest(2, round(0.85 * $1::int * ln((k + 1.0) / k) / ln($2::int + 1.0) / 30))`,
          N,
          C,
        );
        await sql(
          `CREATE TEMP TABLE scale_group (gi int PRIMARY KEY, recipient_id int, members int[]) ON COMMIT DROP`,
        );
        await sql(
          `INSERT INTO scale_group SELECT t.gi, t.r, ARRAY(SELECT (s.value)::int FROM jsonb_array_elements_text(t.members) s)
           FROM jsonb_to_recordset($1::jsonb) AS t(gi int, r int, members jsonb)`,
          JSON.stringify(groups.map((g) => ({ gi: g.gi, r: g.recipientId, members: g.members }))),
        );
        // Draws: kind (85% channel, 10% one-to-one, 5% group), then the conversation, sender and extras.
        await sql(
          `CREATE TEMP TABLE scale_draw ON COMMIT DROP AS
           SELECT g, random() AS u_kind, random() AS u_conv, random() AS u_topic, random() AS u_sender, random() AS u_other, random() AS u_extra, random() AS u_who
           FROM generate_series(1, $1::int) AS g`,
          N,
        );
        await sql(
          `CREATE TEMP TABLE scale_plan ON COMMIT DROP AS
           SELECT d.g,
             CASE WHEN d.u_kind < 0.85 THEN 'c' WHEN d.u_kind < 0.95 THEN 'd' ELSE 'g' END AS kind,
             CASE WHEN d.u_kind < 0.85 THEN least($2::int, floor(($2::int + 1.0) ^ d.u_conv))::int END AS k,
             CASE WHEN d.u_kind < 0.85 THEN floor((sc.topics + 1.0) ^ d.u_topic)::int END AS t,
             CASE WHEN d.u_kind >= 0.95 THEN least($3::int, floor(($3::int + 1.0) ^ d.u_conv))::int END AS gi,
             -- one-to-one: the reader sends 30%, others by rank; the other party by rank too
             CASE WHEN d.u_kind >= 0.85 AND d.u_kind < 0.95 THEN (CASE WHEN d.u_sender < 0.3 THEN 1 ELSE least($4::int, floor(($4::int + 1.0) ^ d.u_who))::int END) END AS si,
             CASE WHEN d.u_kind >= 0.85 AND d.u_kind < 0.95 THEN least($4::int, floor(($4::int + 1.0) ^ d.u_other))::int END AS oi,
             d.u_sender, d.u_extra
           FROM scale_draw d
           LEFT JOIN scale_channel sc ON d.u_kind < 0.85 AND sc.k = least($2::int, floor(($2::int + 1.0) ^ d.u_conv))::int
           WHERE d.g <= $1::int`,
          N,
          C,
          groups.length,
          U,
        );
        // A one-to-one message to oneself is a message to oneself in Zulip too; keep them rare.
        await sql(
          `UPDATE scale_plan SET oi = CASE WHEN si = 1 THEN 2 ELSE 1 END WHERE kind = 'd' AND si = oi AND u_extra > 0.01`,
        );
        // Temporary tables are never analyzed automatically: without statistics the planner took
        // the 100-row channel table for thousands and joined it by nested loops over the plan.
        for (const table of ["scale_user", "scale_channel", "scale_group", "scale_plan"])
          await sql(`ANALYZE ${table}`);
      });

      await step("messages", async () => {
        await sql(`LOCK TABLE message IN EXCLUSIVE MODE`);
        const [{ base }] = await tx.$queryRawUnsafe<[{ base: bigint }]>(
          `SELECT nextval(pg_get_serial_sequence('message', 'id')) AS base`,
        );
        await tx.$queryRawUnsafe(
          `SELECT setval(pg_get_serial_sequence('message', 'id'), $1::bigint + $2)::text`,
          base,
          N,
        );
        // Per message: the recipient, the sender, a mentioned user (2% of channel messages), a
        // wildcard mention (0.2%), a link (5%), an image (0.5%), an upload (0.5%), and the words.
        await sql(
          `CREATE TEMP TABLE scale_message ON COMMIT DROP AS
           SELECT $1::bigint::int + p.g - 1 AS id, p.g, p.kind, p.k, p.t, p.gi,
             COALESCE(sc.recipient_id, sg.recipient_id, o.recipient_id) AS recipient_id,
             COALESCE(sc.subs[1 + floor(p.u_sender * cardinality(sc.subs))::int], sg.members[1 + floor(p.u_sender * cardinality(sg.members))::int], s.id) AS sender_id,
             o.id AS other_id,
             CASE WHEN p.kind = 'c' AND p.u_extra < 0.02 THEN sc.subs[1 + floor(random() * cardinality(sc.subs))::int] END AS mentioned_id,
             p.kind = 'c' AND p.u_extra >= 0.02 AND p.u_extra < 0.022 AS wildcard,
             p.u_extra >= 0.10 AND p.u_extra < 0.15 AS link,
             p.u_extra >= 0.15 AND p.u_extra < 0.155 AS image,
             p.u_extra >= 0.16 AND p.u_extra < 0.165 AS upload,
             (SELECT string_agg(($2::text[])[floor($3::float8 ^ random())::int], ' ') FROM generate_series(1, 3 + ((p.g::bigint * 7919) % 23)::int)) AS words
           FROM scale_plan p
           LEFT JOIN scale_channel sc ON sc.k = p.k
           LEFT JOIN scale_group sg ON sg.gi = p.gi
           LEFT JOIN scale_user s ON s.i = p.si
           LEFT JOIN scale_user o ON o.i = p.oi`,
          Number(base),
          WORDS,
          WORDS.length + 1,
        );
        // The rare word: six messages of the biggest channel, the first of each sixth of its history.
        await sql(
          `UPDATE scale_message SET words = words || ' ' || $1 WHERE id IN (
             SELECT DISTINCT ON (part) id FROM (SELECT id, ntile($2) OVER (ORDER BY id) AS part FROM scale_message WHERE k = 1) x ORDER BY part, id)`,
          SCALE_RARE_WORD,
          RARE_HITS,
        );
        await sql(`ANALYZE scale_message`);
        await sql(
          `INSERT INTO message (id, realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version, date_sent,
                                sending_client_id, type, has_attachment, has_image, has_link, is_channel_message)
           SELECT sm.id, $1::int, sm.sender_id, sm.recipient_id,
             CASE WHEN sm.kind = 'c' THEN (CASE WHEN (sm.k + sm.t) % 29 = 0 THEN $4::text ELSE '' END)
               || ($5::text[])[1 + (sm.k * 31 + sm.t * 17) % cardinality($5::text[])] || ' ' || ($5::text[])[1 + (sm.k * 7 + sm.t * 13) % cardinality($5::text[])] || ' ' || sm.t
               ELSE '' END,
             concat_ws(' ', CASE WHEN mu.id IS NOT NULL THEN '@**' || mu.full_name || '**' WHEN sm.wildcard THEN '@**all**' END,
               sm.words,
               CASE WHEN sm.link THEN 'https://example.com/docs/' || sm.g END,
               CASE WHEN sm.image THEN '[screenshot.png](/user_uploads/' || $1::int || '/sc/' || sm.g || '/screenshot.png)' END,
               CASE WHEN sm.upload THEN '[notes.pdf](/user_uploads/' || $1::int || '/sc/' || sm.g || '/notes.pdf)' END),
             '<p>' || concat_ws(' ',
               CASE WHEN mu.id IS NOT NULL THEN '<span class="user-mention" data-user-id="' || mu.id || '">@' || mu.full_name || '</span>'
                    WHEN sm.wildcard THEN '<span class="user-mention channel-wildcard-mention" data-user-id="*">@all</span>' END,
               sm.words,
               CASE WHEN sm.link THEN '<a href="https://example.com/docs/' || sm.g || '">https://example.com/docs/' || sm.g || '</a>' END,
               CASE WHEN sm.image THEN '<a href="/user_uploads/' || $1::int || '/sc/' || sm.g || '/screenshot.png">screenshot.png</a>' END,
               CASE WHEN sm.upload THEN '<a href="/user_uploads/' || $1::int || '/sc/' || sm.g || '/notes.pdf">notes.pdf</a>' END) || '</p>'
               || CASE WHEN sm.image THEN '<div class="message_inline_image"><a href="/user_uploads/' || $1::int || '/sc/' || sm.g || '/screenshot.png" title="screenshot.png"><img src="/user_uploads/' || $1::int || '/sc/' || sm.g || '/screenshot.png"></a></div>' ELSE '' END,
             1, now() - ($2::int - sm.g) * ($3::float8 / $2::int::float8) * interval '1 second', $6::int, 1,
             sm.image OR sm.upload, sm.image, sm.link OR sm.image OR sm.upload, sm.kind = 'c'
           FROM scale_message sm LEFT JOIN user_profile mu ON mu.id = sm.mentioned_id
           ORDER BY sm.id`,
          realm.id,
          N,
          365 * 86400,
          RESOLVED_TOPIC_PREFIX,
          WORDS,
          clientId,
        );
        return Number(base);
      });

      const rows = await step("user_message rows", async () => {
        const alertUsers = users.filter((_, i) => i % 10 === 0).map((u) => u.id);
        const F = FLAG_BITS;
        // The recipients of each message: a channel's subscribers, a group's members, or the two
        // parties of a one-to-one message (one row when they are the same user).
        return sql(
          `INSERT INTO user_message (user_profile_id, message_id, flags)
           SELECT r.uid, sm.id,
             (CASE WHEN r.uid = sm.sender_id OR random() >= 1.0 / 7 THEN ${F.read} ELSE 0 END)
             | (CASE WHEN random() < 0.004 THEN ${F.starred} ELSE 0 END)
             | (CASE WHEN r.uid = sm.mentioned_id THEN ${F.mentioned} ELSE 0 END)
             | (CASE WHEN sm.wildcard THEN ${F.stream_wildcard_mentioned} ELSE 0 END)
             | (CASE WHEN r.uid <> sm.sender_id AND r.uid = ANY ($1::int[]) AND sm.words LIKE '%' || $2 || '%' THEN ${F.has_alert_word} ELSE 0 END)
             | (CASE WHEN sm.kind <> 'c' THEN ${F.is_private} ELSE 0 END)
           FROM scale_message sm
           LEFT JOIN scale_channel sc ON sc.k = sm.k
           LEFT JOIN scale_group sg ON sg.gi = sm.gi
           CROSS JOIN LATERAL unnest(CASE sm.kind WHEN 'c' THEN sc.subs WHEN 'g' THEN sg.members
             ELSE (CASE WHEN sm.sender_id = sm.other_id THEN ARRAY[sm.sender_id] ELSE ARRAY[sm.sender_id, sm.other_id] END) END) AS r(uid)`,
          alertUsers,
          SCALE_ALERT_WORD,
        );
      });

      await step("uploads, reactions, topics, counters", async () => {
        // Each image or file link claims its upload, as a send would (lib/uploads/attachments.ts).
        await sql(
          `WITH a AS (
             INSERT INTO attachment (realm_id, owner_id, file_name, path_id, size, content_type, create_time, is_realm_public, is_web_public)
             SELECT $1::int, sm.sender_id, CASE WHEN sm.image THEN 'screenshot.png' ELSE 'notes.pdf' END,
               $1::int || '/sc/' || sm.g || '/' || CASE WHEN sm.image THEN 'screenshot.png' ELSE 'notes.pdf' END, 1000 + sm.g % 100000,
               CASE WHEN sm.image THEN 'image/png' ELSE 'application/pdf' END, now(), sm.kind = 'c', false
             FROM scale_message sm WHERE sm.image OR sm.upload
             RETURNING id, path_id)
           INSERT INTO attachment_message (attachment_id, message_id)
           SELECT a.id, sm.id FROM a JOIN scale_message sm ON a.path_id = $1::int || '/sc/' || sm.g || '/' || CASE WHEN sm.image THEN 'screenshot.png' ELSE 'notes.pdf' END`,
          realm.id,
        );
        // Reactions on about 4% of the messages, one to three, by their recipients.
        await sql(
          `INSERT INTO reaction (realm_id, user_profile_id, message_id, emoji_name, emoji_code, reaction_type)
           SELECT $1, x.uid, x.id, ($2::text[])[x.e], ($3::text[])[x.e], 'unicode_emoji'
           FROM (SELECT sm.id, 1 + (sm.g + n) % cardinality($2::text[]) AS e,
                   CASE sm.kind WHEN 'c' THEN sc.subs[1 + floor(random() * cardinality(sc.subs))::int]
                                WHEN 'g' THEN sg.members[1 + floor(random() * cardinality(sg.members))::int]
                                ELSE sm.other_id END AS uid
                 FROM scale_message sm
                 LEFT JOIN scale_channel sc ON sc.k = sm.k
                 LEFT JOIN scale_group sg ON sg.gi = sm.gi
                 CROSS JOIN LATERAL generate_series(1, 1 + (sm.g % 3)) AS n
                 WHERE (sm.g * 2654435761::bigint) % 1000 < 40) x
           ON CONFLICT DO NOTHING`,
          realm.id,
          EMOJI.map((e) => e[0]),
          EMOJI.map((e) => e[1]),
        );
        // Followed and muted topics: each subscriber follows one of a channel's first topics
        // now and then, and mutes another; one subscription in 20 is muted.
        for (const [policy, share, offset] of [
          [TopicVisibility.FOLLOWED, 0.3, 1],
          [TopicVisibility.MUTED, 0.2, 4],
        ] as const)
          await sql(
            `INSERT INTO user_topic (realm_id, user_profile_id, stream_id, recipient_id, topic_name, topic_name_lower, visibility_policy, last_updated)
             SELECT DISTINCT ON (sub.user_profile_id, s.id) $1, sub.user_profile_id, s.id, s.recipient_id, m.subject, lower(m.subject), $2, now()
             FROM subscription sub JOIN stream s ON s.recipient_id = sub.recipient_id AND s.realm_id = $1
             JOIN LATERAL (SELECT m.subject FROM message m WHERE m.realm_id = $1 AND m.recipient_id = s.recipient_id AND m.subject <> ''
                             ORDER BY m.id LIMIT 1 OFFSET $4 + (sub.user_profile_id % 3)) m ON TRUE
             WHERE random() < $3
             ON CONFLICT DO NOTHING`,
            realm.id,
            policy,
            share,
            offset * 20,
          );
        await sql(
          `UPDATE subscription SET is_muted = true WHERE realm_id = $1 AND random() < 0.05
             AND recipient_id IN (SELECT recipient_id FROM stream WHERE realm_id = $1)`,
          realm.id,
        );
        await sql(
          `UPDATE stream s SET first_message_id = (SELECT min(m.id) FROM message m WHERE m.realm_id = $1 AND m.recipient_id = s.recipient_id)
           WHERE s.realm_id = $1`,
          realm.id,
        );
      });
      const reader = users[0]!;
      const partner = users[1]!;
      return { reader, partner, rows };
    },
    { timeout: 24 * 3600_000, maxWait: 60_000 },
  );

  await step("ANALYZE", () => deps.db.$executeRawUnsafe(`ANALYZE`));
  const count = async (table: string, where = "realm_id = $1") =>
    Number(
      (
        await deps.db.$queryRawUnsafe<{ n: bigint }[]>(
          `SELECT count(*) AS n FROM ${table} WHERE ${where}`,
          realm.id,
        )
      )[0]!.n,
    );
  const counts = {
    users: U + 2,
    channels: C + 3,
    messages: await count("message"),
    user_message: result.rows,
    reactions: await count("reaction"),
    uploads: await count("attachment"),
    "followed/muted topics": await count("user_topic"),
  };
  return {
    realm: await realmCredential(deps, realm),
    users: {
      owner: credentialOf(owner),
      reader: credentialOf(result.reader),
      partner: credentialOf(result.partner),
    },
    counts,
    seconds: (performance.now() - started) / 1000,
  };
}

/** A whole number from `--name`, within bounds, or the default. */
function count(values: Values, name: string, fallback: number, min: number, max: number): number {
  const text = values[name] as string | undefined;
  if (text === undefined) return fallback;
  const value = Number(text.replace(/_/g, ""));
  if (!/^\d[\d_]*$/.test(text) || value < min || value > max)
    throw new UsageError(
      `--${name} ${text}: give a whole number from ${min} to ${max.toLocaleString("en")}`,
    );
  return value;
}

export const populateScaleCommand: Command<ScaleOptions & { file: string | null }> = {
  name: "populate-scale",
  summary:
    "Create an organization of N messages in realistic shapes, to measure the cost of reads at scale.",
  options: {
    messages: { type: "string", value: "N", description: "how many messages (default 1000000)" },
    users: {
      type: "string",
      value: "N",
      description: "how many users (default: N/1000, from 30 to 1000)",
    },
    channels: {
      type: "string",
      value: "N",
      description: "how many channels (default: N/10000, from 10 to 100)",
    },
    "string-id": {
      type: "string",
      value: "ORG_ID",
      description: "the new organization's id (default: scale)",
    },
    seed: {
      type: "string",
      value: "N",
      description:
        "seed of the random draws (default 1): the same seed gives the same organization",
    },
    credentials: {
      type: "string",
      value: "FILE",
      description:
        "write the organization and its owner's, reader's and partner's API keys there (JSON)",
    },
  },
  notes:
    "Channels get messages with probability ~1/rank, topics within a channel likewise; 85% channel\n" +
    "messages, 10% one-to-one, 5% group direct messages; about 1 in 7 received messages unread.\n" +
    "User 1 (the reader) is in the bigger half of the channels. 1,000,000 messages take a few\n" +
    "minutes on PostgreSQL; with the embedded database keep N to a few hundred thousand.",
  check(values) {
    const messages = count(values, "messages", 1_000_000, 1, 50_000_000);
    const defaults = scaleDefaults(messages);
    const stringId = (values["string-id"] as string | undefined) ?? "scale";
    if (!/^[a-z0-9-]{3,40}$/.test(stringId))
      throw new UsageError(`--string-id ${stringId}: 3 to 40 lowercase letters, numbers and '-'s`);
    const file = values.credentials === undefined ? null : resolve(values.credentials as string);
    if (file && (!existsSync(dirname(file)) || (existsSync(file) && statSync(file).isDirectory())))
      throw new UsageError(
        `--credentials ${values.credentials}: not a file in an existing directory`,
      );
    return {
      messages,
      users: count(values, "users", defaults.users, 10, 100_000),
      channels: count(values, "channels", defaults.channels, 2, 10_000),
      stringId,
      seed: count(values, "seed", 1, 0, 1_000_000),
      file,
    };
  },
  async run({ file, ...options }, deps) {
    await checkScaleTarget(deps, options.stringId);
    const result = await populateScale(deps, {
      ...options,
      progress: (line) => process.stderr.write(line + "\n"),
    });
    if (file) writeFileSync(file, JSON.stringify(result, null, 2) + "\n", { mode: 0o600 });
    return labelled(
      `Created the organization "${result.realm.name}" in ${result.seconds.toFixed(0)} s.`,
      [
        ["organization URL", `http://${result.realm.host}`],
        ...reachHints(`http://${result.realm.host}`),
        ...Object.entries(result.counts).map(
          ([k, v]) => [k, v.toLocaleString("en")] as [string, string],
        ),
        ["reader", `${result.users.reader.email} (API key ${result.users.reader.api_key})`],
        ...(file ? [["credentials", file] as [string, string]] : []),
      ],
    );
  },
};

/** Refuses a second fill of the same organization id before anything is written. */
export async function checkScaleTarget(deps: AppDeps, stringId: string): Promise<void> {
  if (await deps.db.realm.findUnique({ where: { stringId }, select: { id: true } }))
    throw new JsonableError(
      `An organization with the id '${stringId}' exists already: choose another with --string-id`,
    );
}
