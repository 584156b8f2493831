/**
 * The authorization matrix (issue 22): every operation of the spec, called with valid parameters
 * by each kind of caller — owner, administrator, moderator, member, guest, bot, a deactivated
 * user, the owner of another organization naming this one's objects, that owner's key sent to
 * this organization's Host, and no credentials — must answer Zulip's status and `msg`. The rows
 * live in authorization-matrix/<resource>.ts; an operation of the spec without a row, or a row
 * naming an operation the spec lacks, fails the test.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { HTTP_METHODS, loadSpec } from "../../server/http/spec.ts";
import type { ZulipClient } from "../../client/src/index.ts";
import { useTestServer } from "../helpers/server.ts";
import { createOtherOrg } from "../helpers/other-org.ts";
import {
  ACTOR,
  CALLERS,
  DEACTIVATED,
  DEACTIVATED_ACCOUNT,
  NOT_LOGGED_IN,
  WRONG_SUBDOMAIN,
  clientOnHost,
  multipart,
  type Caller,
  type Cell,
  type Fixtures,
  type Req,
  type Row,
} from "./authorization-matrix/matrix.ts";
import { rows as channelRows } from "./authorization-matrix/channels.ts";
import { rows as messageRows } from "./authorization-matrix/messages.ts";
import { rows as organizationRows } from "./authorization-matrix/organization.ts";
import { rows as userRows } from "./authorization-matrix/users.ts";

const ROWS: Row[] = [...messageRows, ...channelRows, ...userRows, ...organizationRows];

const server = useTestServer();

/** Every operation of the bundled spec the server runs from, as `METHOD /path`. */
function specOperations(): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries<Record<string, unknown>>(loadSpec().doc.paths))
    for (const method of HTTP_METHODS)
      if (item[method]) out.push(`${method.toUpperCase()} ${path}`);
  return out;
}

function requiresAuth(op: string): boolean {
  const [method, path] = op.split(" ") as [string, string];
  return [...loadSpec().operations.values()].find(
    (o) => o.method === method.toLowerCase() && o.specPath === path,
  )!.requiresAuth;
}

let fx: Fixtures;
const clients = new Map<Caller, ZulipClient>();

async function setUp() {
  const c = server.creds;
  const otherOrg = await createOtherOrg(server);
  let n = 0;
  fx = {
    server,
    realmId: c.realm.id,
    uid: (name) => (c.users[name] ?? c.bots[name])!.user_id,
    sid: (name) => c.channels[name]!.stream_id,
    next: () => ++n,
    as: (name) => server.as(name),
    otherOrg,
  };
  // Administrators may create users only with Zulip's can_create_users flag.
  await server.db.userProfile.updateMany({
    where: { id: { in: [fx.uid("desdemona"), fx.uid("iago")] } },
    data: { canCreateUsers: true },
  });
  // Read receipts and message reports on, so that the caller's rights decide.
  await server.db.realm.update({
    where: { id: c.realm.id },
    data: { enableReadReceipts: true, moderationRequestChannelId: fx.sid("core team") },
  });
  await server.db.userProfile.update({
    where: { id: fx.uid(DEACTIVATED) },
    data: { isActive: false },
  });
  for (const caller of CALLERS) {
    if (caller === "deactivated") clients.set(caller, server.as(DEACTIVATED));
    else if (caller === "anonymous") clients.set(caller, server.client());
    else if (caller === "other" || caller === "foreignHost")
      clients.set(
        caller,
        clientOnHost(
          server.baseUrl,
          caller === "other" ? otherOrg.host : server.deps.config.externalHost,
          otherOrg.email,
          otherOrg.apiKey,
        ),
      );
    else clients.set(caller, server.as(ACTOR[caller]));
  }
}

function expected(row: Row, caller: Caller, authenticated: boolean): Cell {
  const cells = typeof row.expect === "function" ? row.expect(fx) : row.expect;
  const cell = cells[caller];
  if (cell) return cell;
  if (!authenticated)
    throw new Error(`${row.op} needs no authentication: state its '${caller}' cell`);
  if (caller === "deactivated") return DEACTIVATED_ACCOUNT;
  if (caller === "foreignHost") return WRONG_SUBDOMAIN;
  return NOT_LOGGED_IN;
}

/**
 * The callers refused before any parameter is read (deactivated, foreign Host, none) reuse the
 * request made for the other organization's owner, which consumed nothing: still valid, and a
 * third fewer fresh objects to make.
 */
const REUSES_OTHER = new Set<Caller>(["deactivated", "foreignHost", "anonymous"]);
let otherReq: Req | undefined;

async function call(row: Row, caller: Caller, authenticated: boolean): Promise<Cell> {
  const reuse = authenticated && REUSES_OTHER.has(caller) && otherReq;
  const req = reuse || (await row.req({ caller, actor: ACTOR[caller], fx }));
  if (caller === "other") otherReq = req;
  const [method, path] = row.op.split(" ") as [string, string];
  const client = clients.get(caller)! as unknown as Record<
    string,
    (
      path: string,
      init: Record<string, unknown>,
    ) => Promise<{ error?: unknown; response: Response }>
  >;
  const init: Record<string, unknown> = { params: { path: req.path, query: req.query } };
  if (req.body) init.body = req.body;
  if (req.multipart) Object.assign(init, multipart(req.body ?? {}));
  const { error, response } = await client[method]!(path, init);
  return { status: response.status, msg: (error as { msg?: string } | undefined)?.msg ?? "" };
}

describe("the authorization matrix", () => {
  beforeAll(setUp);

  it("has one row for every operation of the spec, and none for an operation it lacks", () => {
    const ops = specOperations();
    const named = ROWS.map((r) => r.op);
    const missing = ops.filter((op) => !named.includes(op));
    const unknown = named.filter((op) => !ops.includes(op));
    const twice = named.filter((op, i) => named.indexOf(op) !== i);
    expect({ missing, unknown, twice }).toEqual({ missing: [], unknown: [], twice: [] });
  });

  describe.each(ROWS.map((row) => [row.op, row] as const))("%s", (_op, row) => {
    it("answers every caller as Zulip does", async () => {
      const authenticated = requiresAuth(row.op);
      const wrong: string[] = [];
      otherReq = undefined;
      for (const caller of CALLERS) {
        let got: Cell;
        try {
          got = await call(row, caller, authenticated);
        } catch (e) {
          got = { status: 0, msg: `threw: ${(e as Error).message}` };
        }
        // After the call: a cell may name what the row's setup made (a queue id).
        const want = expected(row, caller, authenticated);
        if (got.status !== want.status || got.msg !== want.msg)
          wrong.push(
            `as ${caller}: expected ${want.status} "${want.msg}", got ${got.status} "${got.msg}"`,
          );
        if (got.status === 200) await row.after?.({ caller, actor: ACTOR[caller], fx });
      }
      expect(wrong).toEqual([]);
    });
  });
});
