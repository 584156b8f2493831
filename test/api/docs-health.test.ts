/**
 * The non-API pages a server has beside /api/v1: the offline Redoc page at /api/docs (and every
 * page under it), and GET /health, healthy and with its database gone.
 */
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { get } from "node:http";
import { describe, expect, it } from "vitest";
import { createApp } from "../../server/app.ts";
import { configFromEnv } from "../../server/config.ts";
import { EventBus } from "../../server/events/index.ts";
import { buildDocs, DOCS_PAGE } from "../../server/http/docs.ts";
import { createLogger } from "../../server/logger.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";

const server = useTestServer();

describe("/api/docs", () => {
  it("is a self-contained page: Redoc inlined, no CDN image, no telemetry, links under /api/docs", async () => {
    await buildDocs();
    const res = await fetch(`${server.baseUrl}/api/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toBe(readFileSync(DOCS_PAGE, "utf8"));
    expect(html).toContain('"basePath":"/api/docs","router":"history"');
    expect(html).toContain('"disableTelemetry":true');
    expect(html).not.toMatch(/cdn\.redoc\.ly|<script[^>]+src=|<link[^>]+href="https?:/);
    // The prerendered markup (links for basePath "/") is dropped: Redoc renders with its basePath.
    expect(html).toContain('<div id="redoc"></div>');
    expect(html).toContain("Send a message");
    // A page under /api/docs (a reload after following a sidebar link) is the same page.
    const section = await fetch(`${server.baseUrl}/api/docs/channels/operation/create-channel`);
    expect([section.status, (await section.text()).length]).toEqual([200, html.length]);
  }, 60_000);
});

describe("GET /health", () => {
  it("is 200 without authentication while the database answers", async () => {
    const res = await fetch(`${server.baseUrl}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ result: "success", msg: "" });
  });

  it("is 500 SERVER_NOT_READY when the database does not answer", async () => {
    const database = await createTestDatabase();
    const config = { ...configFromEnv({}), logLevel: "silent" };
    const deps = {
      db: database.prisma,
      events: new EventBus(database),
      log: createLogger("silent"),
      config,
      now: () => new Date(),
    };
    const app = createApp(deps);
    const listener = await new Promise<import("node:http").Server>((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    try {
      const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/health`;
      expect((await fetch(url)).status).toBe(200);
      deps.events.close();
      await database.close();
      const res = await fetch(url);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({
        result: "error",
        msg: "Cannot query postgresql",
        code: "SERVER_NOT_READY",
      });
    } finally {
      listener.closeAllConnections();
      listener.close();
    }
  });
});

describe("GET /", () => {
  it("sends a logged-out visitor to the login page, which points at the API reference", async () => {
    const res = await fetch(`${server.baseUrl}/`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login/");
    const login = await fetch(`${server.baseUrl}/login/`);
    expect(login.status).toBe(200);
    expect(login.headers.get("content-type")).toContain("text/html");
    expect(await login.text()).toContain('<a href="/api/docs">API reference</a>');
    // The Host header names no organization here but the default one: the page is that one's.
    const hostile = await new Promise<string>((resolve, reject) => {
      const { hostname, port } = new URL(server.baseUrl);
      get({ hostname, port, path: "/login/", headers: { Host: "chat.example<x>" } }, (r) => {
        let text = "";
        r.on("data", (c) => (text += c)).on("end", () => resolve(text));
      }).on("error", reject);
    });
    expect(hostile).not.toContain("<x>");
  });
});

describe("a server with no organization yet", () => {
  it("tells unauthenticated requests too what to run, in the 401 the spec declares", async () => {
    const database = await createTestDatabase();
    const config = { ...configFromEnv({}), logLevel: "silent", validateResponses: true };
    const deps = {
      db: database.prisma,
      events: new EventBus(database),
      log: createLogger("silent"),
      config,
      now: () => new Date(),
    };
    await deps.events.ready();
    const listener = await new Promise<import("node:http").Server>((resolve) => {
      const s = createApp(deps).listen(0, "127.0.0.1", () => resolve(s));
    });
    const hint =
      "This server has no organization yet: create one with `npm run manage -- create-realm` (or `npm run manage -- populate-db` for the development organization).";
    try {
      const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/api/v1`;
      const asked = [
        fetch(`${base}/users/me`),
        fetch(`${base}/users/me`, {
          headers: { Authorization: "Basic " + btoa("a@b.example:short") },
        }),
        fetch(`${base}/messages`, {
          method: "POST",
          headers: { Authorization: "Bearer x" },
          body: new URLSearchParams({ type: "stream" }),
        }),
        fetch(`${base}/users/me`, {
          headers: { Authorization: "Basic " + btoa("a@b.example:" + "k".repeat(32)) },
        }),
      ];
      for (const res of await Promise.all(asked)) {
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toBe('Basic realm="zulip"');
        const body = await res.json();
        expect(body).toEqual({ result: "error", msg: hint, code: "UNAUTHORIZED" });
        expect(checkResponse("GET", `${base}/users/me`, 401, body)).toBeNull();
      }
      // Operations without authentication still answer as they do.
      expect((await fetch(`${base}/server_settings`)).status).toBe(200);
    } finally {
      listener.closeAllConnections();
      listener.close();
      deps.events.close();
      await database.close();
    }
  });
});
