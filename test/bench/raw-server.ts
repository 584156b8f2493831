/**
 * The yardstick of `npm run bench`: a minimal Express 5 server answering the benchmarked requests
 * (success case only) with hand-written SQL, the fewest queries each needs, on the same database as
 * our server. It is not a second implementation: no validation, no events, channel messages only,
 * a toy Markdown renderer.
 *
 *   GET  /api/v1/server_settings   no query (readiness)
 *   GET  /api/v1/users/me          auth + 1 query (max_message_id)
 *   GET  /api/v1/messages/:id      auth + 1 query (message, sender, client, channel, access)
 *   POST /api/v1/messages          auth + 1 query (channel and its subscribers) + BEGIN, INSERT
 *                                  message, one multi-row INSERT user_message, the event log row
 *                                  and its NOTIFY, COMMIT
 *   POST /api/v1/users/me/presence auth + one statement that moves the stored presence times
 *                                  past Zulip's 55 s threshold, creating the row if needed (no
 *                                  event for a user coming online; ping_only only)
 *   PATCH /api/v1/messages/:id     auth + one UPDATE renaming the message's whole topic (topic,
 *                                  propagate_mode=change_all only; no checks, history or notices)
 *   POST /api/v1/typing            auth + one statement: the recipients checked (every id a user of
 *                                  the organization) and, when they are, the typing event appended
 *                                  to the event log with its NOTIFY (direct messages only)
 *
 * Auth is HTTP Basic with one indexed query by API key per request (no user cache); the
 * organization is looked up once and cached. Env: PORT, and DATABASE_URL (PostgreSQL, a pg pool
 * of 10 like our server's) or PGLITE_DIR (embedded: `new PGlite(dir)`, fsync off as PGlite does
 * by default).
 */
import { createHash } from "node:crypto";
import express, { type Request, type Response } from "express";
import pg from "pg";

type Query = <T = Record<string, any>>(text: string, params?: unknown[]) => Promise<T[]>;
interface Sql {
  query: Query;
  transaction<R>(fn: (query: Query) => Promise<R>): Promise<R>;
  close(): Promise<void>;
}

async function connect(): Promise<Sql> {
  if (process.env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
    return {
      query: async (text, params) => (await pool.query(text, params)).rows,
      async transaction(fn) {
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          const result = await fn(async (text, params) => (await client.query(text, params)).rows);
          await client.query("COMMIT");
          return result;
        } catch (e) {
          await client.query("ROLLBACK").catch(() => {});
          throw e;
        } finally {
          client.release();
        }
      },
      close: () => pool.end(),
    };
  }
  const dir = process.env.PGLITE_DIR;
  if (!dir) throw new Error("set DATABASE_URL or PGLITE_DIR");
  const { PGlite } = await import("@electric-sql/pglite");
  const db = new PGlite(dir);
  await db.waitReady;
  return {
    query: async <T>(text: string, params?: unknown[]) => (await db.query<T>(text, params)).rows,
    transaction: (fn) =>
      db.transaction((tx) =>
        fn(async <T>(text: string, params?: unknown[]) => (await tx.query<T>(text, params)).rows),
      ),
    close: () => db.close(),
  };
}

const sql = await connect();

interface User {
  id: number;
  realm_id: number;
  email: string;
  delivery_email: string;
  full_name: string;
  role: number;
  is_active: boolean;
  is_bot: boolean;
  timezone: string;
  date_joined: Date;
  avatar_version: number;
}
const USER_COLUMNS =
  "id, realm_id, email, delivery_email, full_name, role, is_active, is_bot, timezone, date_joined, avatar_version";

let realm: Promise<{ id: number; string_id: string }> | undefined;
const theRealm = () =>
  (realm ??= sql
    .query<{ id: number; string_id: string }>(
      "SELECT id, string_id FROM realm WHERE NOT deactivated ORDER BY id LIMIT 1",
    )
    .then((r) => r[0]!));

const clientIds = new Map<string, Promise<number>>();
function clientId(name: string): Promise<number> {
  let id = clientIds.get(name);
  if (!id) {
    id = sql
      .query<{ id: number }>(
        "INSERT INTO client (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id",
        [name],
      )
      .then((r) => r[0]!.id);
    clientIds.set(name, id);
  }
  return id;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code = "BAD_REQUEST",
  ) {
    super(message);
  }
}

async function authenticate(req: Request): Promise<User> {
  const header = req.headers.authorization ?? "";
  if (!header.startsWith("Basic "))
    throw new HttpError(401, "Missing authorization header", "UNAUTHORIZED");
  const decoded = Buffer.from(header.slice(6), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  const email = decoded.slice(0, colon).trim().toLowerCase();
  const [[user], { id: realmId }] = await Promise.all([
    sql.query<User>(`SELECT ${USER_COLUMNS} FROM user_profile WHERE api_key = $1`, [
      decoded.slice(colon + 1).trim(),
    ]),
    theRealm(),
  ]);
  if (
    !user ||
    user.realm_id !== realmId ||
    (user.delivery_email.toLowerCase() !== email && user.email.toLowerCase() !== email)
  )
    throw new HttpError(401, "Invalid API key", "UNAUTHORIZED");
  if (!user.is_active) throw new HttpError(401, "Account is deactivated", "USER_DEACTIVATED");
  return user;
}

const avatarUrl = (email: string, version: number) =>
  `https://secure.gravatar.com/avatar/${createHash("md5").update(email.toLowerCase()).digest("hex")}?d=identicon&version=${version}`;
const seconds = (d: Date | string) => Math.floor(new Date(d).getTime() / 1000);
const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
/** Paragraphs and **bold** only: enough for the bench's content. */
const render = (content: string) =>
  `<p>${escapeHtml(content).replace(/\*\*(.+?)\*\*/g, "<strong>$1</strong>")}</p>`;
const FLAG_NAMES = ["read", "starred", "collapsed", "mentioned"];

const app = express();
app.set("etag", false);
app.set("x-powered-by", false);
app.use(express.urlencoded({ extended: false }));

app.get("/api/v1/server_settings", (_req, res) => {
  res.json({ result: "success", msg: "", zulip_version: "raw-sql yardstick" });
});

app.get("/api/v1/users/me", async (req: Request, res: Response) => {
  const user = await authenticate(req);
  const [{ max }] = (await sql.query<{ max: number | null }>(
    "SELECT max(message_id) AS max FROM user_message WHERE user_profile_id = $1",
    [user.id],
  )) as [{ max: number | null }];
  res.json({
    result: "success",
    msg: "",
    user_id: user.id,
    delivery_email: user.delivery_email,
    email: user.email,
    full_name: user.full_name,
    date_joined: new Date(user.date_joined).toISOString(),
    is_active: user.is_active,
    is_owner: user.role === 100,
    is_admin: user.role <= 200,
    is_guest: user.role === 600,
    is_bot: user.is_bot,
    role: user.role,
    timezone: user.timezone,
    avatar_url: avatarUrl(user.delivery_email, user.avatar_version),
    avatar_version: user.avatar_version,
    profile_data: {},
    max_message_id: max ?? -1,
  });
});

app.get("/api/v1/messages/:id", async (req: Request, res: Response) => {
  const user = await authenticate(req);
  const { id: realmId, string_id } = await theRealm();
  // The user has a user_message row, or the message is in a public channel (guests: rows only).
  const [m] = await sql.query(
    `SELECT m.id, m.sender_id, m.recipient_id, m.subject, m.content, m.rendered_content, m.date_sent, m.last_edit_time,
            s.email AS sender_email, s.full_name AS sender_full_name, s.avatar_version AS sender_avatar_version,
            c.name AS client, st.id AS stream_id, st.name AS stream_name, um.flags
     FROM message m
     JOIN user_profile s ON s.id = m.sender_id
     JOIN client c ON c.id = m.sending_client_id
     JOIN recipient r ON r.id = m.recipient_id
     LEFT JOIN stream st ON r.type = 2 AND st.id = r.type_id
     LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = $2
     WHERE m.id = $1 AND m.realm_id = $3
       AND (um.message_id IS NOT NULL OR (st.id IS NOT NULL AND NOT st.invite_only AND $4::boolean))`,
    [Number(req.params.id), user.id, realmId, user.role !== 600],
  );
  if (!m) throw new HttpError(400, "Invalid message(s)");
  const flags = Number(m.flags ?? 0);
  res.json({
    result: "success",
    msg: "",
    message: {
      id: m.id,
      type: m.stream_id ? "stream" : "private",
      subject: m.subject,
      topic_links: [],
      content: m.rendered_content,
      content_type: "text/html",
      display_recipient: m.stream_name,
      recipient_id: m.recipient_id,
      sender_id: m.sender_id,
      sender_email: m.sender_email,
      sender_full_name: m.sender_full_name,
      sender_realm_str: string_id,
      avatar_url: avatarUrl(m.sender_email, m.sender_avatar_version),
      client: m.client,
      is_me_message: false,
      timestamp: seconds(m.date_sent),
      ...(m.last_edit_time ? { last_edit_timestamp: seconds(m.last_edit_time) } : {}),
      reactions: [],
      submessages: [],
      flags:
        m.flags === null ? ["read", "historical"] : FLAG_NAMES.filter((_, i) => flags & (1 << i)),
      stream_id: m.stream_id,
    },
    raw_content: m.content,
  });
});

app.post("/api/v1/messages", async (req: Request, res: Response) => {
  const user = await authenticate(req);
  const { id: realmId } = await theRealm();
  const { type, to, topic, content } = (req.body ?? {}) as Record<string, string | undefined>;
  if (type !== "stream" && type !== "channel")
    throw new HttpError(400, "The raw server sends channel messages only");
  if (!to || content === undefined || topic === undefined)
    throw new HttpError(400, "Missing 'to', 'topic' or 'content'");
  const [channel] = await sql.query<{
    recipient_id: number;
    invite_only: boolean;
    is_archived: boolean;
    subscribers: number[];
  }>(
    `SELECT st.recipient_id, st.invite_only, st.is_archived,
            ARRAY(SELECT sub.user_profile_id FROM subscription sub WHERE sub.recipient_id = st.recipient_id AND sub.active AND sub.is_user_active) AS subscribers
     FROM stream st WHERE st.realm_id = $1 AND lower(st.name) = lower($2)`,
    [realmId, to],
  );
  if (!channel) throw new HttpError(400, `Channel '${to}' does not exist`, "STREAM_DOES_NOT_EXIST");
  if (channel.is_archived || (channel.invite_only && !channel.subscribers.includes(user.id)))
    throw new HttpError(400, `Not authorized to send to channel '${to}'`);
  const userIds = [...new Set([...channel.subscribers, user.id])];
  const sendingClientId = await clientId(
    req.headers["user-agent"]?.split(/[/\s]/)[0]?.trim() || "Unspecified",
  );
  const id = await sql.transaction(async (query) => {
    const [message] = await query<{ id: number }>(
      `INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version, date_sent,
                            sending_client_id, type, has_attachment, has_image, has_link, is_channel_message)
       VALUES ($1, $2, $3, $4, $5, $6, 1, now(), $7, 1, false, false, false, true) RETURNING id`,
      [
        realmId,
        user.id,
        channel.recipient_id,
        topic.trim(),
        content,
        render(content),
        sendingClientId,
      ],
    );
    await query(
      "INSERT INTO user_message (user_profile_id, message_id, flags) SELECT u, $2, f FROM unnest($1::int[], $3::bigint[]) AS t(u, f)",
      [
        userIds,
        message!.id,
        userIds.map((u) => (u === user.id ? 1 : 0)), // the sender has read it
      ],
    );
    // The same work as ours: the message event in the event log, each user's flags beside it, and
    // a NOTIFY at commit (on a channel of its own, so that our server, running beside it on the
    // same database, does not wake up for its sends).
    const event = {
      type: "message",
      message: {
        id: message!.id,
        sender_id: user.id,
        sender_email: user.email,
        sender_full_name: user.full_name,
        recipient_id: channel.recipient_id,
        subject: topic.trim(),
        content: render(content),
        timestamp: Math.floor(Date.now() / 1000),
      },
      markdown: content,
    };
    const userData = Object.fromEntries(
      userIds.map((u) => [u, { flags: u === user.id ? ["read"] : [] }]),
    );
    await query(
      `WITH ins AS (INSERT INTO event_log (realm_id, type, event, user_ids, user_data, invalidate) VALUES ($1, 'message', $2, $3, $4, '{}') RETURNING id)
       SELECT pg_notify('raw_server_events', (SELECT id FROM ins)::text || ':0')`,
      [realmId, event, userIds, userData],
    );
    return message!.id;
  });
  res.json({ result: "success", msg: "", id });
});

app.post("/api/v1/typing", async (req: Request, res: Response) => {
  const user = await authenticate(req);
  const { id: realmId } = await theRealm();
  const { op, to } = (req.body ?? {}) as Record<string, string | undefined>;
  if ((op !== "start" && op !== "stop") || !to) throw new HttpError(400, "Missing 'op' or 'to'");
  const ids = [...new Set([...(JSON.parse(to) as number[]), user.id])];
  // Autocommit: the check and the append are one statement, so one transaction.
  const [row] = await sql.query<{ ok: boolean }>(
    `WITH u AS (SELECT id, email, is_active FROM user_profile WHERE realm_id = $1 AND id = ANY ($2::int[])),
     ok AS (SELECT count(*) = cardinality($2::int[]) AS ok FROM u),
     ins AS (INSERT INTO event_log (realm_id, type, event, user_ids, user_data, invalidate)
             SELECT $1, 'typing',
                    jsonb_build_object('type', 'typing', 'message_type', 'direct', 'op', $3::text,
                      'sender', jsonb_build_object('user_id', $4::int, 'email', $5::text),
                      'recipients', (SELECT jsonb_agg(jsonb_build_object('user_id', id, 'email', email)) FROM u)),
                    ARRAY(SELECT id FROM u WHERE is_active), NULL, '{}'
             FROM ok WHERE ok RETURNING id)
     SELECT (SELECT ok FROM ok) AS ok, (SELECT pg_notify('raw_server_events', id::text || ':0') FROM ins) AS notified`,
    [realmId, ids, op, user.id, user.email],
  );
  if (!row!.ok) throw new HttpError(400, "Invalid user ID");
  res.json({ result: "success", msg: "" });
});

app.patch("/api/v1/messages/:id", async (req: Request, res: Response) => {
  await authenticate(req);
  const { topic } = (req.body ?? {}) as Record<string, string | undefined>;
  if (topic === undefined) throw new HttpError(400, "The raw server moves topics only");
  const [moved] = await sql.query<{ count: number }>(
    `WITH t AS (SELECT realm_id, recipient_id, subject FROM message WHERE id = $1),
     upd AS (UPDATE message m SET subject = $2 FROM t
             WHERE m.realm_id = t.realm_id AND m.recipient_id = t.recipient_id AND lower(m.subject) = lower(t.subject) AND m.is_channel_message
             RETURNING m.id)
     SELECT count(*)::int AS count FROM upd`,
    [Number(req.params.id), topic.trim()],
  );
  if (!moved!.count) throw new HttpError(400, "Invalid message(s)");
  res.json({ result: "success", msg: "", detached_uploads: [] });
});

app.post("/api/v1/users/me/presence", async (req: Request, res: Response) => {
  const user = await authenticate(req);
  const active = (req.body as Record<string, string | undefined>).status === "active";
  await sql.query(
    `INSERT INTO user_presence (realm_id, user_profile_id, last_connected_time, last_active_time, last_update_id)
     VALUES ($1, $2, now(), CASE WHEN $3 THEN now() END, nextval('user_presence_update_id_seq'))
     ON CONFLICT (user_profile_id) DO UPDATE SET
       last_connected_time = GREATEST(user_presence.last_connected_time, EXCLUDED.last_connected_time),
       last_active_time = GREATEST(user_presence.last_active_time, EXCLUDED.last_active_time),
       last_update_id = EXCLUDED.last_update_id
     WHERE now() - user_presence.last_connected_time > interval '55 seconds'
        OR ($3 AND (user_presence.last_active_time IS NULL
                    OR now() - user_presence.last_active_time > interval '55 seconds'))`,
    [user.realm_id, user.id, active],
  );
  res.json({ result: "success", msg: "" });
});

app.use((err: unknown, _req: Request, res: Response, _next: express.NextFunction) => {
  if (err instanceof HttpError)
    res.status(err.status).json({ result: "error", msg: err.message, code: err.code });
  else {
    console.error(err);
    res.status(500).json({ result: "error", msg: "Internal server error" });
  }
});

const server = app.listen(Number(process.env.PORT ?? 9992), process.env.HOST ?? "127.0.0.1");
server.keepAliveTimeout = 65_000;
function stop() {
  setTimeout(() => process.exit(1), 5_000).unref();
  server.close(() => void sql.close().finally(() => process.exit(0)));
  server.closeAllConnections(); // keep-alive connections of the bench would hold close() up
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
