/**
 * What Zulip's desktop app asks of a server (web-client-notes §1): GET and HEAD
 * /api/v1/server_settings, `realm_uri` the bare origin, `realm_uri + realm_icon` an image, a
 * logged-out load of `realm_uri` ending on `/login/`, and pages that refuse to be framed.
 */
import { describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();

describe("Zulip's desktop app", () => {
  it("adds the organization: GET and HEAD /api/v1/server_settings, realm_uri the bare origin, its icon an image", async () => {
    const settings = await expectSuccess(server.client().GET("/server_settings"));
    expect(settings.realm_uri).toBe("http://zulip.testserver");
    expect(settings.realm_uri).not.toMatch(/\/$/);
    expect(new URL(settings.realm_uri).origin).toBe(settings.realm_uri);
    expect(settings.realm_icon).toBe("/static/images/realm-icon.svg");
    const head = await fetch(`${server.baseUrl}/api/v1/server_settings`, { method: "HEAD" });
    expect(head.status).toBe(200);
    // realm_uri + realm_icon, on this server's address.
    const icon = await fetch(server.baseUrl + settings.realm_icon);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    expect(await icon.text()).toMatch(/^<svg [^>]*viewBox="0 0 128 128"/);
    const favicon = await fetch(`${server.baseUrl}/favicon.ico`);
    expect(favicon.status).toBe(200);
    expect(favicon.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    // register's realm_icon_url is the same default.
    const state = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["realm"] } }),
    );
    expect((state as { realm_icon_url?: string }).realm_icon_url).toBe(
      "/static/images/realm-icon.svg",
    );
  });

  it("loads realm_uri logged out and lands on a URL ending in /login/, a page that cannot be framed", async () => {
    const res = await fetch(`${server.baseUrl}/`, { redirect: "follow" });
    expect(res.status).toBe(200);
    expect(res.url).toMatch(/\/login\/$/);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
  });
});
