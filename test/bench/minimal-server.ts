/**
 * The floor of `npm run bench`: Express plus pg and nothing else, for the three benchmarked
 * operations. One query authenticates (by API key), one does the work, with no fan-out: a send is
 * one INSERT of the message (no recipients' rows, no event, no transaction). Our throughput beside
 * it shows what the framework costs and what our own work costs, next to the ratio to the
 * same-work server (raw-server.ts).
 *
 *   GET  /api/v1/server_settings   no query (readiness)
 *   GET  /api/v1/users/me          auth + the user's newest message id
 *   GET  /api/v1/messages/:id      auth + the message and its sender
 *   POST /api/v1/messages          auth + INSERT message
 *   POST /api/v1/typing            auth + INSERT the event into the log (no check of the recipients, no NOTIFY)
 *   POST /api/v1/users/me/presence auth + one UPDATE of the user's presence times (no threshold)
 *
 * With MINIMAL_VALIDATOR=1 it mounts, after the body parser, express-openapi-validator as our
 * server configures it (server/http/validator.ts: requests checked against our spec, responses
 * not): the floor of any server on the stack the contract fixes.
 *
 * Env: PORT, DATABASE_URL (PostgreSQL only: a pg pool of 10 like our server's), MINIMAL_VALIDATOR.
 */
import express, { type Request, type Response } from "express";
import pg from "pg";
import { loadSpec } from "../../server/http/spec.ts";
import { validatorChain } from "../../server/http/validator.ts";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const realm = (await pool.query<{ id: number }>("SELECT id FROM realm ORDER BY id LIMIT 1"))
  .rows[0]!;
const client = (await pool.query<{ id: number }>("SELECT id FROM client ORDER BY id LIMIT 1"))
  .rows[0]!;

interface User {
  id: number;
  email: string;
  full_name: string;
}

async function authenticate(req: Request, res: Response): Promise<User | undefined> {
  const decoded = Buffer.from((req.headers.authorization ?? "").slice(6), "base64").toString(
    "utf8",
  );
  const key = decoded.slice(decoded.indexOf(":") + 1);
  const user = (
    await pool.query<User>({
      name: "auth",
      text: "SELECT id, email, full_name FROM user_profile WHERE api_key = $1 AND is_active",
      values: [key],
    })
  ).rows[0];
  if (!user)
    res.status(401).json({ result: "error", msg: "Invalid API key", code: "UNAUTHORIZED" });
  return user;
}

const app = express();
app.set("etag", false);
app.set("x-powered-by", false);
app.use(express.urlencoded({ extended: false }));
if (process.env.MINIMAL_VALIDATOR === "1") app.use(validatorChain(loadSpec(), false).chain);

app.get("/api/v1/server_settings", (_req, res) => {
  res.json({ result: "success", msg: "", zulip_version: "minimal" });
});

app.get("/api/v1/users/me", async (req: Request, res: Response) => {
  const user = await authenticate(req, res);
  if (!user) return;
  const { max } = (
    await pool.query<{ max: number | null }>({
      name: "me",
      text: "SELECT max(message_id) AS max FROM user_message WHERE user_profile_id = $1",
      values: [user.id],
    })
  ).rows[0]!;
  res.json({
    result: "success",
    msg: "",
    user_id: user.id,
    email: user.email,
    full_name: user.full_name,
    max_message_id: max ?? -1,
  });
});

app.get("/api/v1/messages/:id", async (req: Request, res: Response) => {
  const user = await authenticate(req, res);
  if (!user) return;
  const m = (
    await pool.query({
      name: "message",
      text: `SELECT m.id, m.subject, m.rendered_content, m.content, m.date_sent, s.email AS sender_email, s.full_name AS sender_full_name
             FROM message m JOIN user_profile s ON s.id = m.sender_id WHERE m.id = $1`,
      values: [Number(req.params.id)],
    })
  ).rows[0];
  if (!m)
    return void res
      .status(400)
      .json({ result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" });
  res.json({
    result: "success",
    msg: "",
    message: {
      id: m.id,
      subject: m.subject,
      content: m.rendered_content,
      sender_email: m.sender_email,
      sender_full_name: m.sender_full_name,
      timestamp: Math.floor(m.date_sent.getTime() / 1000),
    },
    raw_content: m.content,
  });
});

app.post("/api/v1/messages", async (req: Request, res: Response) => {
  const user = await authenticate(req, res);
  if (!user) return;
  const { to, topic, content } = req.body as Record<string, string>;
  const { id } = (
    await pool.query<{ id: number }>({
      name: "send",
      text: `INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version, date_sent, sending_client_id, type, is_channel_message)
             SELECT $1, $2, st.recipient_id, $4, $5, $5, 1, now(), $6, 1, true FROM stream st WHERE st.realm_id = $1 AND st.name = $3 RETURNING id`,
      values: [realm.id, user.id, to, topic, content, client.id],
    })
  ).rows[0]!;
  res.json({ result: "success", msg: "", id });
});

app.post("/api/v1/typing", async (req: Request, res: Response) => {
  const user = await authenticate(req, res);
  if (!user) return;
  const { op, to } = req.body as Record<string, string>;
  await pool.query({
    name: "typing",
    text: `INSERT INTO event_log (realm_id, type, event, user_ids, invalidate)
           VALUES ($1, 'typing', jsonb_build_object('type', 'typing', 'op', $2::text, 'sender', $3::int), $4::int[], '{}')`,
    values: [realm.id, op, user.id, JSON.parse(to ?? "[]") as number[]],
  });
  res.json({ result: "success", msg: "" });
});

app.post("/api/v1/users/me/presence", async (req: Request, res: Response) => {
  const user = await authenticate(req, res);
  if (!user) return;
  await pool.query({
    name: "presence",
    text: "UPDATE user_presence SET last_connected_time = now(), last_active_time = now() WHERE user_profile_id = $1",
    values: [user.id],
  });
  res.json({ result: "success", msg: "" });
});

const server = app.listen(Number(process.env.PORT ?? 9993), process.env.HOST ?? "127.0.0.1");
server.keepAliveTimeout = 65_000;
function stop() {
  setTimeout(() => process.exit(1), 5_000).unref();
  server.close(() => void pool.end().finally(() => process.exit(0)));
  server.closeAllConnections();
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
