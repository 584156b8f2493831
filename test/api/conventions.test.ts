/**
 * Zulip's wire conventions, checked with raw HTTP where the typed client cannot express the
 * request (malformed JSON, multipart, query-string parameters on PATCH, repeated keys). Every
 * response is still validated against the spec.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { startTestServer, useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";
import { JsonableError } from "../../server/errors.ts";
import { handlers } from "../../server/routes.ts";
import { untyped } from "../helpers/builders.ts";

const server = useTestServer();

function basic(shortName: string) {
  const c = server.creds.users[shortName]!;
  return "Basic " + Buffer.from(`${c.email}:${c.api_key}`).toString("base64");
}

/** A raw request whose response must still match the spec. */
async function raw(
  method: string,
  path: string,
  init: {
    headers?: Record<string, string>;
    body?: URLSearchParams | FormData | string;
    as?: string;
  } = {},
) {
  const headers: Record<string, string> = {
    ...(init.as ? { Authorization: basic(init.as) } : {}),
    ...init.headers,
  };
  const response = await fetch(`${server.baseUrl}/api/v1${path}`, {
    method,
    headers,
    body: init.body,
  });
  const body: any = await response.json();
  const problem = checkResponse(method, response.url, response.status, body);
  expect(problem).toBeNull();
  return { status: response.status, body, headers: response.headers };
}
const form = { "Content-Type": "application/x-www-form-urlencoded" };

describe("parameters", () => {
  it("lists unknown parameters, sorted, in ignored_parameters_unsupported", async () => {
    const { status, body } = await raw("GET", "/users/me?zebra=1&apple=2", { as: "hamlet" });
    expect(status).toBe(200);
    expect(body.ignored_parameters_unsupported).toEqual(["apple", "zebra"]);
  });

  it("omits ignored_parameters_unsupported when every parameter was used", async () => {
    const data = await expectSuccess(
      server.as("hamlet").GET("/users/{email}", {
        params: { path: { email: "iago@zulip.com" }, query: { client_gravatar: false } },
      }),
    );
    expect(data).not.toHaveProperty("ignored_parameters_unsupported");
  });

  it("decodes JSON-encoded form fields (lists, integers, booleans)", async () => {
    const body = new URLSearchParams({
      type: "direct",
      to: `[${server.creds.users.iago!.user_id}]`,
      content: "json list",
      read_by_sender: "false",
    });
    const { status, body: sent } = await raw("POST", "/messages", {
      as: "hamlet",
      headers: form,
      body,
    });
    expect(status).toBe(200);
    const { message } = await expectSuccess(
      server
        .as("hamlet")
        .GET("/messages/{message_id}", { params: { path: { message_id: sent.id } } }),
    );
    expect(message.flags).not.toContain("read");
  });

  it("accepts a plain-text string where a union allows it (to=Verona)", async () => {
    const body = new URLSearchParams({
      type: "stream",
      to: "Verona",
      topic: "plain",
      content: "plain text channel name",
    });
    expect((await raw("POST", "/messages", { as: "hamlet", headers: form, body })).status).toBe(
      200,
    );
  });

  it("answers malformed JSON with a clear 400, not a 500", async () => {
    const body = new URLSearchParams({ type: "direct", to: "[1,", content: "x" });
    // `to` also allows plain text, so take a JSON-only field: read_by_sender.
    const bad = new URLSearchParams({
      type: "stream",
      to: "Verona",
      topic: "t",
      content: "x",
      read_by_sender: "yes",
    });
    const r = await raw("POST", "/messages", { as: "hamlet", headers: form, body: bad });
    expect(r).toMatchObject({
      status: 400,
      body: { result: "error", msg: "read_by_sender is not valid JSON", code: "BAD_REQUEST" },
    });
    const r2 = await raw("POST", "/messages", { as: "hamlet", headers: form, body });
    expect(r2.status).toBe(400);
  });

  it("reads a JSON object body as the parameters, and answers malformed JSON with INVALID_JSON", async () => {
    const json = { "Content-Type": "application/json" };
    const ok = await raw("POST", "/messages", {
      as: "hamlet",
      headers: json,
      body: JSON.stringify({ type: "stream", to: "Verona", topic: "json", content: "as JSON" }),
    });
    expect(ok.status).toBe(200);
    const bad = await raw("POST", "/messages", {
      as: "hamlet",
      headers: json,
      body: '{"type": "stream", ',
    });
    expect(bad).toMatchObject({
      status: 400,
      body: { result: "error", msg: "Malformed JSON", code: "INVALID_JSON" },
    });
  });

  it("does not read a body of another type, so its parameters are missing (as in Zulip)", async () => {
    const r = await raw("POST", "/messages", {
      as: "hamlet",
      headers: { "Content-Type": "text/plain" },
      body: "type=stream",
    });
    expect(r).toMatchObject({ status: 400, body: { code: "REQUEST_VARIABLE_MISSING" } });
  });

  it("names the failing list element (user_ids[1] is not an integer)", async () => {
    const r = await raw("GET", `/users?user_ids=${encodeURIComponent('[1,"a"]')}`, {
      as: "hamlet",
    });
    expect(r).toMatchObject({
      status: 400,
      body: { msg: "user_ids[1] is not an integer", code: "BAD_REQUEST" },
    });
    const notJson = await raw("GET", `/messages?anchor=newest&narrow=${encodeURIComponent("[{")}`, {
      as: "hamlet",
    });
    expect(notJson).toMatchObject({ status: 400, body: { msg: "narrow is not valid JSON" } });
    const notList = await raw("GET", "/users?user_ids=5", { as: "hamlet" });
    expect(notList).toMatchObject({ status: 400, body: { msg: "user_ids is not a list" } });
  });

  it("reports a missing argument with REQUEST_VARIABLE_MISSING and var_name", async () => {
    const r = await raw("POST", "/messages", {
      as: "hamlet",
      headers: form,
      body: new URLSearchParams({ type: "stream", to: "Verona", topic: "t" }),
    });
    expect(r).toMatchObject({
      status: 400,
      body: {
        result: "error",
        msg: "Missing 'content' argument",
        code: "REQUEST_VARIABLE_MISSING",
        var_name: "content",
      },
    });
  });

  it("words type errors as Zulip does", async () => {
    const r = await raw("GET", "/messages/1?apply_markdown=maybe", { as: "hamlet" });
    expect(r).toMatchObject({ status: 400, body: { msg: "apply_markdown is not a boolean" } });
    const r2 = await raw("GET", "/messages?anchor=newest&num_before=-1", { as: "hamlet" });
    expect(r2).toMatchObject({ status: 400, body: { msg: "Invalid num_before" } });
  });

  it("accepts multipart/form-data bodies (zulip-js sends them)", async () => {
    const fd = new FormData();
    fd.append("type", "stream");
    fd.append("to", "Verona");
    fd.append("topic", "multipart");
    fd.append("content", "sent as multipart");
    const r = await raw("POST", "/messages", { as: "hamlet", body: fd });
    expect(r.status).toBe(200);
    expect(r.body.id).toBeTypeOf("number");
  });

  it("reads POST and PATCH parameters from the query string (zulip-js sends PATCH that way)", async () => {
    const r = await raw(
      "POST",
      "/messages?type=stream&to=Verona&topic=query&content=from%20the%20query%20string",
      { as: "hamlet" },
    );
    expect(r.status).toBe(200);
    const p = await raw("PATCH", "/realm?allow_message_editing=false", { as: "iago" });
    expect(p).toMatchObject({ status: 200, body: { allow_message_editing: false } });
    await raw("PATCH", "/realm?allow_message_editing=true", { as: "iago" });
  });

  it("reports a path id repeated in the query string as ignored, as Zulip does", async () => {
    const r = await raw("GET", `/messages/1?message_id=1`, { as: "hamlet" });
    expect(r.body.ignored_parameters_unsupported).toEqual(["message_id"]);
  });

  it("takes the last value of a repeated key, as Django does", async () => {
    const r = await raw(
      "GET",
      "/users/hamlet@zulip.com?client_gravatar=true&client_gravatar=false",
      { as: "othello" },
    );
    expect(r.body.user.avatar_url).not.toBeNull();
  });
});

describe("authentication", () => {
  it("answers a missing Authorization header with 401 and WWW-Authenticate", async () => {
    const r = await raw("GET", "/users/me");
    expect(r).toMatchObject({
      status: 401,
      body: {
        msg: "Not logged in: API authentication or user session required",
        code: "UNAUTHORIZED",
      },
    });
    expect(r.headers.get("www-authenticate")).toBe('Basic realm="zulip"');
  });

  it("answers a wrong key with 401 'Invalid API key'", async () => {
    const { response } = await expectError(
      server.client("hamlet@zulip.com", "a".repeat(32)).GET("/users/me"),
      401,
      "Invalid API key",
    );
    expect(response.headers.get("www-authenticate")).toBe('Basic realm="zulip"');
    // Another user's valid key does not work either.
    await expectError(
      server.client("hamlet@zulip.com", server.creds.users.iago!.api_key).GET("/users/me"),
      401,
      "Invalid API key",
    );
  });

  it("answers a badly formed key with 401 'Malformed API key'", async () => {
    await expectError(
      server.client("hamlet@zulip.com", "short").GET("/users/me"),
      401,
      "Malformed API key",
    );
  });

  it("refuses a non-Basic scheme", async () => {
    const r = await raw("GET", "/users/me", { headers: { Authorization: "Bearer abc" } });
    expect(r).toMatchObject({
      status: 400,
      body: { msg: "This endpoint requires HTTP basic authentication." },
    });
  });

  it("refuses deactivated users and organizations with 401", async () => {
    const aaron = server.creds.users.aaron!;
    await server.db.userProfile.update({ where: { id: aaron.user_id }, data: { isActive: false } });
    await expectError(server.as("aaron").GET("/users/me"), 401, "Account is deactivated");
    await server.db.userProfile.update({ where: { id: aaron.user_id }, data: { isActive: true } });
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { deactivated: true },
    });
    await expectError(
      server.as("aaron").GET("/users/me"),
      401,
      "This organization has been deactivated",
    );
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { deactivated: false },
    });
  });

  it("checks authentication before parameters", async () => {
    await expectError(
      server
        .client("hamlet@zulip.com", "b".repeat(32))
        .GET("/messages/{message_id}", { params: { path: { message_id: untyped("x") } } }),
      401,
      "Invalid API key",
    );
  });

  it("lets bots use the API with their own key", async () => {
    const bot = server.creds.bots["default-bot"]!;
    const me = await expectSuccess(server.client(bot.email, bot.api_key).GET("/users/me"));
    expect(me).toMatchObject({ is_bot: true, user_id: bot.user_id });
  });
});

describe("routing", () => {
  it("answers an unknown endpoint with a JSON 404", async () => {
    const r = await raw("GET", "/no_such_endpoint", { as: "hamlet" });
    expect(r).toMatchObject({ status: 404, body: { result: "error", msg: "Endpoint not found" } });
  });

  it("answers a wrong method with 405 and the allowed methods", async () => {
    const r = await raw("PUT", "/users/me", { as: "hamlet" });
    expect(r).toMatchObject({
      status: 405,
      body: {
        result: "error",
        msg: "Method Not Allowed",
        code: "BAD_REQUEST",
        allowed_methods: ["GET", "DELETE"],
      },
    });
  });

  it("gives every 405 a code, a form-encoded PATCH included", async () => {
    const r = await raw("PATCH", "/server_settings?x=1", {
      as: "hamlet",
      headers: form,
      body: new URLSearchParams({ full_name: "a b" }),
    });
    expect(r).toMatchObject({
      status: 405,
      body: { code: "BAD_REQUEST", allowed_methods: ["GET"] },
    });
  });

  it("tells GET /users/{email} from PATCH /users/{user_id} on the same template", async () => {
    const r = await raw("PATCH", `/users/${server.creds.users.hamlet!.user_id}`, {
      as: "iago",
      headers: form,
      // His current name: the request reaches update-user, which changes nothing.
      body: new URLSearchParams({ full_name: "King Hamlet" }),
    });
    expect(r).toMatchObject({ status: 200, body: { result: "success" } });
  });
});

describe("unexpected failures", () => {
  it("answers an error status the operation does not declare with a JSON envelope, not an HTML page", async () => {
    const original = handlers["get-server-settings"];
    (handlers as Record<string, unknown>)["get-server-settings"] = async () => {
      throw new JsonableError("I'm a teapot", { httpStatus: 418 });
    };
    try {
      const response = await fetch(`${server.baseUrl}/api/v1/server_settings`);
      expect(response.status).toBe(418);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await response.json()).toEqual({
        result: "error",
        msg: "I'm a teapot",
        code: "BAD_REQUEST",
      });
    } finally {
      (handlers as Record<string, unknown>)["get-server-settings"] = original;
    }
  });

  it("answers 500 with an error envelope and no stack trace, and logs the error", async () => {
    const logged: string[] = [];
    const log = pino({ level: "error" }, { write: (line: string) => logged.push(line) });
    const broken = await startTestServer({}, { log });
    try {
      // Break the database under the running app: every authenticated request now fails inside Prisma.
      await broken.db.$executeRawUnsafe('ALTER TABLE "user_profile" RENAME TO "user_profile_gone"');
      const auth = server.creds.users.hamlet!;
      const response = await fetch(`${broken.baseUrl}/api/v1/users/me`, {
        headers: {
          Authorization:
            "Basic " +
            Buffer.from(`${auth.email}:${broken.creds.users.hamlet!.api_key}`).toString("base64"),
        },
      });
      const text = await response.text();
      expect(response.status).toBe(500);
      expect(JSON.parse(text)).toEqual({
        result: "error",
        msg: "Internal server error",
        code: "INTERNAL_SERVER_ERROR",
      });
      expect(text).not.toMatch(/at .*\.ts|prisma/i);
      // The error with its cause, then the request's own line (at error level, as every 5xx).
      expect(logged.map((l) => JSON.parse(l))).toEqual([
        expect.objectContaining({ level: 50, msg: "unexpected error", url: "/api/v1/users/me" }),
        expect.objectContaining({
          level: 50,
          msg: "GET /users/me 500",
          route: "/users/me",
          status: 500,
        }),
      ]);
      expect(JSON.parse(logged[1]!)).not.toHaveProperty("err");
    } finally {
      await broken.close();
    }
  });
});
