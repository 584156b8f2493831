/**
 * Property-based fuzzing of every operation in the spec, through real HTTP (raw bytes, not the
 * typed client, since most requests are malformed on purpose). For each operation fast-check
 * generates request plans: valid-ish values from the parameters' schemas (the development
 * organization's ids, enums, JSON text as Zulip clients send it) mixed with hostile ones (wrong
 * types, huge and deeply nested JSON, NUL bytes, malformed percent escapes, extreme numbers,
 * duplicate keys, unencoded reserved characters), sent in every placement (query, form,
 * JSON object, multipart) on every method, with odd content types and encodings, bad
 * Authorization, Host and User-Agent headers. A fixed catalog of such requests runs first for
 * every operation (fast-check `examples`), so each hostile kind is tried whatever the seed.
 *
 * Every answer must be an HTTP answer, not a 5xx (but a 501 the operation declares), a JSON
 * `{result, msg}` envelope agreeing with its status, and conform to the spec where the request
 * maps to an operation. More oracles catch silent misreadings: a parameter that was sent must
 * not be reported missing; a GET must not answer differently when its query is percent-encoded
 * differently or carries a `#fragment`; a user of a second organization must not be shown the
 * development organization's users. Afterwards the server must still answer.
 *
 * Seeded and bounded (environment variables, defaults below):
 * - FUZZ_SEED seeds operation i with FUZZ_SEED + i; FUZZ_RUNS random plans per operation
 *   (default 5, CI's slice; `npm run fuzz`: 200) follow its catalog; FUZZ_OP=<operationId> runs one operation;
 * - shrinking a failure stops after FUZZ_SHRINK_MS, and after FUZZ_SHRINK_TOTAL_MS for the file;
 * - fast-check prints the seed and path of a failure: FUZZ_SEED=… FUZZ_OP=… FUZZ_PATH=<path>
 *   replays just the counterexample; the error shows the exact request (with a curl line);
 * - FUZZ_COLLECT=1 goes on past failures and lists the distinct ones at the end (with
 *   TEST_LOG_LEVEL=error the server logs each 500's stack); FUZZ_PROFILE=1 lists slow requests.
 */
import fc from "fast-check";
import { appendFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AUTHS,
  BODIES,
  compile,
  CONTENT_ENCODINGS,
  CONTENT_TYPES,
  describeExchange,
  HOSTILE_NARROWS,
  HOSTS,
  judge,
  METHODS,
  operations,
  parseJson,
  PATH_VALUES,
  planArb,
  send,
  SUFFIXES,
  UAS,
  validArb,
  type Answer,
  type Ctx,
  type Operation,
  type Plan,
  type Val,
  type WireRequest,
  type World,
} from "../helpers/fuzz.ts";
import { useTestServer } from "../helpers/server.ts";
import { createOtherOrg } from "../helpers/other-org.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 424242);
/** A short slice by default (CI); `npm run fuzz` runs 200 (FUZZ_RUNS). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 5);
const SHRINK_MS = Number(process.env.FUZZ_SHRINK_MS ?? 3000);
/** Shrinking time for the whole file, so that a regression failing every operation stays bounded. */
let shrinkLeftMs = Number(process.env.FUZZ_SHRINK_TOTAL_MS ?? 12_000);
/** FUZZ_OP: one operationId, or several separated by commas. */
const ONLY = process.env.FUZZ_OP?.split(",");
/** FUZZ_COLLECT=1: do not stop at the first failure of an operation; list distinct ones at the end. */
const COLLECT = Boolean(process.env.FUZZ_COLLECT);
const collected = new Map<string, { count: number; size: number; report: string }>();

const server = useTestServer();
const ops = operations();
let ctx: Ctx;
let world: World;
const stats = {
  requests: 0,
  byStatus: new Map<number, number>(),
  slowest: [] as [number, string][],
};

beforeAll(async () => {
  // A second organization, to send its host and its user's key to the first one.
  const deps = server.deps;
  const devHost = deps.config.externalHost;
  const other = await createOtherOrg(server);
  const c = server.creds;
  ctx = {
    baseUrl: server.baseUrl,
    devHost,
    users: { iago: c.users.iago!, hamlet: c.users.hamlet!, polonius: c.users.polonius! },
    bot: c.bots["default-bot"]!,
    otherOrg: { email: other.email, api_key: other.apiKey, host: other.host },
  };
  const queueIds: string[] = [];
  for (let n = 0; n < 2; n++) {
    const register = await fetch(`${server.baseUrl}/api/v1/register`, {
      method: "POST",
      headers: {
        Authorization:
          "Basic " +
          Buffer.from(`${c.users.iago!.email}:${c.users.iago!.api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "event_types=%5B%22message%22%5D",
    });
    queueIds.push(((await register.json()) as { queue_id: string }).queue_id);
  }
  world = {
    userIds: [...Object.values(c.users), ...Object.values(c.bots)].map((u) => u.user_id),
    emails: Object.values(c.users).map((u) => u.email),
    streamIds: Object.values(c.channels).map((s) => s.stream_id),
    streamNames: Object.keys(c.channels),
    messageIds: (
      await deps.db.message.findMany({ select: { id: true }, orderBy: { id: "asc" } })
    ).map((m) => m.id),
    groupIds: (
      await deps.db.namedUserGroup.findMany({
        where: { realmId: c.realm.id },
        select: { id: true },
      })
    ).map((g) => g.id),
    queueIds,
  };
});

afterAll(() => {
  const statuses = [...stats.byStatus]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s}×${n}`)
    .join(" ");
  console.log(
    `fuzz: ${stats.requests} requests (seed ${SEED}, ${RUNS} random plans per operation): ${statuses}`,
  );
  for (const [key, { count, report }] of [...collected].sort())
    console.log(`=== ${count}× ${key}\n${report}\n`);
  if (process.env.FUZZ_PROFILE)
    for (const [ms, what] of stats.slowest.sort((a, b) => b[0] - a[0]).slice(0, 40))
      console.log(`${ms} ms ${what}`);
});

// ---------------------------------------------------------------------------------------------
// The catalog: a valid request per operation, then one change of each hostile kind. The
// rotations (by operation index) spread the transport variants over the operations so that
// each is sent at least once without sending every one to every operation.

/**
 * Values that make the operation's request succeed where the spec's examples do not (they name
 * ids of Zulip's own development server), so that the hostile changes reach the handler.
 */
function baseline(op: Operation): Record<string, unknown> {
  const iago = server.creds.users.iago!;
  switch (op.id) {
    case "fetch-api-key":
      return { username: iago.email, password: iago.password };
    case "get-events":
      return { queue_id: world.queueIds[0], dont_block: true };
    case "delete-queue":
      return { queue_id: world.queueIds[1] };
    case "get-messages":
      return { anchor: "newest", num_before: 5, num_after: 0 };
    case "send-message":
      return { type: "stream", to: "Verona", topic: "fuzz", content: "Hello from the fuzzer" };
    default:
      return {};
  }
}

/**
 * Operations that take a credential away (a deactivation, a new API key): after each of their
 * requests the development users and bots get theirs back, so later requests still reach handlers.
 */
const TAKES_CREDENTIALS = new Set([
  "deactivate-user",
  "deactivate-own-user",
  "deactivate-bot",
  "regenerate-api-key",
]);
async function restoreCredentials() {
  for (const u of [...Object.values(server.creds.users), ...Object.values(server.creds.bots)])
    await server.db.userProfile.update({
      where: { id: u.user_id },
      data: { isActive: true, apiKey: u.api_key },
    });
}

function pathBaseline(name: string, example: unknown): unknown {
  if (name === "message_id") return world.messageIds[0];
  if (name === "user_id") return server.creds.users.hamlet!.user_id;
  if (name === "email") return server.creds.users.hamlet!.email;
  if (name === "stream_id") return world.streamIds[0];
  if (name === "user_group_id") return world.groupIds.at(-1);
  if (name === "bot_id") return server.creds.bots["default-bot"]!.user_id;
  return example;
}

function basePlan(op: Operation): Plan {
  const sample = (name: string, schema: unknown) =>
    fc.sample(validArb(name, schema, world), { seed: 7, numRuns: 1 })[0];
  const params: Record<string, Val | undefined> = {};
  for (const f of op.params)
    if (f.required) params[f.name] = { k: "v", v: f.example ?? sample(f.name, f.schema) };
  for (const [name, v] of Object.entries(baseline(op)))
    if (v !== undefined) params[name] = { k: "v", v };
  return {
    method: op.method,
    user: "iago",
    auth: "valid",
    host: "dev",
    ua: "normal",
    contentType: "natural",
    encoding: "none",
    suffix: "",
    placement: "natural",
    body: "fields",
    style: "component",
    path: op.path.map((f): Val => ({
      k: "text",
      s: String(pathBaseline(f.name, f.example) ?? sample(f.name, f.schema)),
    })),
    params,
    extras: [],
  };
}

/** Hostile values every declared parameter gets at once (shrinking then finds the one that matters). */
const FIELD_HOSTILES: Val[] = [
  { k: "deep", depth: 12_000, shape: "array" },
  { k: "deep", depth: 12_000, shape: "object" },
  { k: "deep", depth: 12_000, shape: "narrow" },
  { k: "text", s: "a\u0000b" },
  { k: "text", s: '["\\u0000"]' },
  { k: "wire", s: "%C3%28" },
  { k: "wire", s: "%zz" },
  { k: "wire", s: "%" },
  { k: "text", s: "1e999" },
  { k: "text", s: "-Infinity" },
  { k: "text", s: "9223372036854775808" },
  { k: "text", s: "[9223372036854775808]" },
  { k: "text", s: "9.2e18" },
  { k: "text", s: "-0" },
  { k: "text", s: "0x10" },
  { k: "long", n: 100_000, unit: "x" },
  { k: "text", s: "[1," },
  { k: "text", s: '{"new":9223372036854775808}' },
];

/** Changes to a valid value's strings or numbers, one parameter at a time (the rest stays valid,
 * so the value gets past validation to the handler and the database). */
const MUTATIONS: Record<string, (x: string | number) => unknown> = {
  nul: (x) => (typeof x === "string" ? `${x}\u0000` : x),
  bigint: (x) => (typeof x === "number" ? 2 ** 63 : x),
  long: (x) => (typeof x === "string" ? "x".repeat(50_000) : x),
  negative: (x) => (typeof x === "number" ? -1 : x),
  empty: (x) => (typeof x === "string" ? "" : x),
  surrogate: (x) => (typeof x === "string" ? `${x}\ud800` : x),
};
const ROTATING_MUTATIONS = ["bigint", "long", "negative", "empty", "surrogate"];

function mutate(value: unknown, f: (x: string | number) => unknown): unknown {
  if (typeof value === "string" || typeof value === "number") return f(value);
  if (Array.isArray(value)) return value.map((v) => mutate(v, f));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mutate(v, f)]));
  return value;
}

const pick = <T>(list: readonly T[], n: number) => list[1 + (n % (list.length - 1))]!;

function catalog(op: Operation, n: number): Plan[] {
  const base = basePlan(op);
  const plans: Plan[] = [
    base,
    { ...base, user: n % 2 ? "hamlet" : "polonius" },
    { ...base, style: "raw" },
  ];
  for (const k of [0, 10]) plans.push({ ...base, auth: pick(AUTHS, n + k) });
  plans.push(
    { ...base, host: pick(HOSTS, n) },
    { ...base, auth: "other-org-user", host: "other-org" },
  );
  plans.push({ ...base, ua: op.id === "send-message" ? "long-token" : pick(UAS, n) });
  for (const k of [0, 9]) plans.push({ ...base, contentType: pick(CONTENT_TYPES, n + k) });
  for (const k of [0, 5]) plans.push({ ...base, encoding: pick(CONTENT_ENCODINGS, n + k) });
  for (const k of [0, 8]) plans.push({ ...base, body: pick(BODIES, n + k) });
  plans.push({ ...base, suffix: pick(SUFFIXES, n) });
  plans.push({
    ...base,
    method: METHODS.filter((m) => m !== op.method)[n % (METHODS.length - 1)]!,
  });
  // DELETE with a form body, POST/PATCH with the parameters in the query string; JSON or multipart.
  plans.push(
    { ...base, placement: op.hasBody ? "query" : "form" },
    { ...base, placement: n % 2 ? "json" : "multipart" },
  );
  // Duplicate keys: every parameter again, with another value (`a=1&a=2`).
  if (op.params.length)
    plans.push({
      ...base,
      extras: op.params.map((f): [string, Val] => [f.name, { k: "text", s: "2" }]),
    });
  // Deep nesting in an undeclared field, in a form or in a JSON object body.
  plans.push({
    ...base,
    placement: n % 2 ? "natural" : "json",
    extras: [["zzz", { k: "deep", depth: 12_000, shape: n % 2 ? "object" : "array" }]],
  });
  // Every declared parameter at once gets a hostile value (a third of the list per operation,
  // in rotation); shrinking then finds the parameter that matters.
  if (op.params.length)
    FIELD_HOSTILES.forEach((h, k) => {
      if (k % 3 === n % 3)
        plans.push({ ...base, params: Object.fromEntries(op.params.map((f) => [f.name, h])) });
    });
  op.params.forEach((f, k) => {
    const value =
      base.params[f.name]?.k === "v"
        ? (base.params[f.name] as { v: unknown }).v
        : fc.sample(validArb(f.name, f.schema, world), { seed: 7, numRuns: 1 })[0];
    for (const name of ["nul", ROTATING_MUTATIONS[(n + k) % ROTATING_MUTATIONS.length]!]) {
      const changed = mutate(value, MUTATIONS[name]!);
      // A long string goes as a descriptor: the plan stays printable and small to shrink.
      const v: Val =
        name === "long" && typeof changed === "string"
          ? { k: "long", n: changed.length, unit: "x" }
          : { k: "v", v: changed };
      if (JSON.stringify(changed) !== JSON.stringify(value))
        plans.push({ ...base, params: { ...base.params, [f.name]: v } });
    }
  });
  for (const f of op.params.filter((p) => p.name === "narrow"))
    for (const s of HOSTILE_NARROWS)
      plans.push({ ...base, params: { ...base.params, [f.name]: { k: "text", s } } });
  if (op.path.length)
    for (const s of [
      "9223372036854775808",
      "%2F",
      "1#frag",
      pick(PATH_VALUES, n),
      pick(PATH_VALUES, n + 13),
    ])
      plans.push({ ...base, path: op.path.map((): Val => ({ k: "wire", s })) });
  return plans;
}

// ---------------------------------------------------------------------------------------------

function record(a: Answer, ms = 0, what = "") {
  if (process.env.FUZZ_PROFILE) stats.slowest.push([ms, what]);
  stats.requests++;
  stats.byStatus.set(a.status, (stats.byStatus.get(a.status) ?? 0) + 1);
}

function failure(
  problems: string[],
  req: WireRequest,
  a: Answer,
  op: Operation,
): Error | undefined {
  if (COLLECT) {
    // One entry per operation, kind of problem and answer; the smallest request is kept.
    const msg = parseJson(a)?.msg;
    const key = `${op.id} | ${problems
      .map((p) =>
        p
          .split("\n")[0]!
          .replace(/\d{3,}/g, "N")
          .slice(0, 120),
      )
      .join("; ")} | ${a.status} ${JSON.stringify(msg)?.slice(0, 100)}`;
    const size =
      req.target.length +
      (req.body?.length ?? 0) +
      req.headers.reduce((n, [, v]) => n + v.length, 0);
    const known = collected.get(key);
    if (!known || size < known.size)
      collected.set(key, {
        count: (known?.count ?? 0) + 1,
        size,
        report: `${problems.join("; ")}\n${describeExchange(req, a, ctx.baseUrl)}`,
      });
    else known.count++;
    return undefined;
  }
  return new Error(
    `${op.method} ${op.template}: ${problems.join("; ")}\n${describeExchange(req, a, ctx.baseUrl)}\n(replay: FUZZ_SEED=${SEED} FUZZ_OP=${op.id} FUZZ_PATH=<the path above>)`,
  );
}

const FRAGMENTLESS: Record<Plan["suffix"], Plan["suffix"]> = {
  "": "",
  "/": "/",
  "#frag": "",
  "#": "",
  "?": "?",
  "?&": "?&",
  "?=": "?=",
  "?#a": "?",
  "/#/../users/me": "/",
};

async function check(op: Operation, plan: Plan): Promise<void> {
  const req = compile(op, plan, ctx);
  // FUZZ_TRACE=<file>: each request is appended before it is sent (to find one that kills the process).
  if (process.env.FUZZ_TRACE)
    appendFileSync(process.env.FUZZ_TRACE, `${op.id} ${JSON.stringify(plan).slice(0, 2000)}\n`);
  const started = Date.now();
  const a = await send(ctx.baseUrl, req);
  record(a, Date.now() - started, `${a.status} ${op.id} ${JSON.stringify(plan).slice(0, 300)}`);
  const problems = judge(op, req, a, ctx.baseUrl);
  const body = parseJson(a);

  // A parameter sent where Zulip reads it (query string; form, JSON or multipart body of any
  // method but GET) must not be reported missing.
  const faithful =
    plan.method === op.method &&
    plan.contentType === "natural" &&
    ["none", "gzip", "deflate", "GZIP", "chunked"].includes(plan.encoding) &&
    plan.body === "fields";
  const readsBody = op.method !== "GET";
  // (A JSON null is not counted as sent.)
  const sentNull = [...Object.entries(plan.params), ...plan.extras].some(
    ([k, v]) => k === body?.var_name && v?.k === "v" && v.v === null,
  );
  if (!problems.length && faithful && body?.code === "REQUEST_VARIABLE_MISSING" && !sentNull) {
    const where = req.sent.query.includes(body.var_name)
      ? "query string"
      : readsBody && req.sent.body.includes(body.var_name)
        ? `${plan.placement === "natural" ? "form" : plan.placement} body`
        : undefined;
    if (where) problems.push(`'${body.var_name}' was sent in the ${where} but is reported missing`);
  }

  // Another organization's user is not shown the development organization's users (unless the
  // request itself named them).
  if (!problems.length && plan.auth === "other-org-user" && a.status === 200) {
    const sent = req.target + (req.body?.toString("latin1") ?? "");
    const leaked = world.emails.filter(
      (e) => a.body.includes(e) && !sent.includes(e) && !sent.includes(encodeURIComponent(e)),
    );
    if (leaked.length)
      problems.push(`a user of another organization is shown ${leaked.join(", ")}`);
  }

  // A GET answers the same whichever way its query is percent-encoded, and ignores a fragment.
  if (
    !problems.length &&
    op.method === "GET" &&
    plan.method === "GET" &&
    (plan.style !== "component" || FRAGMENTLESS[plan.suffix] !== plan.suffix)
  ) {
    const twinPlan: Plan = { ...plan, style: "component", suffix: FRAGMENTLESS[plan.suffix] };
    const twinReq = compile(op, twinPlan, ctx);
    const twin = await send(ctx.baseUrl, twinReq);
    record(twin);
    const twinProblems = judge(op, twinReq, twin, ctx.baseUrl);
    if (twinProblems.length) {
      const e = failure(twinProblems, twinReq, twin, op);
      if (e) throw e;
      return;
    }
    const t = parseJson(twin);
    const same = twin.status === a.status && t?.code === body?.code && t?.msg === body?.msg;
    if (!same)
      problems.push(
        `the same GET ${[plan.style !== "component" ? "fully percent-encoded" : "", FRAGMENTLESS[plan.suffix] !== plan.suffix ? "without the fragment" : ""].filter(Boolean).join(" and ")} answers ${twin.status} ${JSON.stringify(t?.msg)}, this one ${a.status} ${JSON.stringify(body?.msg)}\n--- the twin:\n${describeExchange(twinReq, twin, ctx.baseUrl)}\n---`,
      );
  }
  if (problems.length) {
    const e = failure(problems, req, a, op);
    if (e) throw e;
  }
}

describe("fuzzing every operation", () => {
  // The index (seed and catalog rotations) is the operation's place in the whole spec, so that
  // FUZZ_OP replays exactly what a full run did.
  ops.forEach((op, index) => {
    if (ONLY && !ONLY.includes(op.id)) return;
    it(`${op.method} ${op.template}`, { timeout: 120_000 }, async () => {
      const examples = catalog(op, index).map((p): [Plan] => [p]);
      let failedAt: number | undefined;
      let budget = 0;
      // Once a failure is found every run is a shrinking attempt: past the budget, interrupt
      // (fast-check then reports the smallest counterexample so far).
      const shrinkBudget: fc.Plugin<[Plan]> = () => ({
        decorateRun: (run) => (value) =>
          failedAt !== undefined && Date.now() - failedAt > budget
            ? new fc.PreconditionFailure(true)
            : run(value),
      });
      try {
        await fc.assert(
          fc.asyncProperty(planArb(op, world), async (plan) => {
            try {
              await check(op, plan);
              if (TAKES_CREDENTIALS.has(op.id)) await restoreCredentials();
            } catch (e) {
              if (failedAt === undefined)
                [failedAt, budget] = [Date.now(), Math.min(SHRINK_MS, shrinkLeftMs)];
              throw e;
            }
          }),
          {
            seed: SEED + index,
            numRuns: examples.length + RUNS,
            examples,
            includeErrorInReport: true,
            plugins: [shrinkBudget],
            ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH, endOnFailure: true } : {}),
          },
        );
      } finally {
        if (failedAt !== undefined) shrinkLeftMs -= Math.min(budget, Date.now() - failedAt);
      }
    });
  });

  it("leaves the server alive and answering", async () => {
    const settings = await fetch(`${server.baseUrl}/api/v1/server_settings`);
    expect(settings.status).toBe(200);
    const iago = server.creds.users.iago!;
    const me = await fetch(`${server.baseUrl}/api/v1/users/me`, {
      headers: {
        Authorization: "Basic " + Buffer.from(`${iago.email}:${iago.api_key}`).toString("base64"),
      },
    });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ result: "success", user_id: iago.user_id });
  });
});
