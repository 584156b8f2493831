/**
 * Bots' and dummy addresses need a domain that makes a valid address (Zulip's
 * get_fake_email_domain): the organization's host when it can, else FAKE_EMAIL_DOMAIN. On a
 * laptop the host is an IP address, and POST /bots answered "Bad name or username" for every bot.
 */
import { describe, expect, it } from "vitest";
import type { Db } from "../../server/db/index.ts";
import { fakeEmailDomain } from "../../server/lib/realm/realm.ts";

// The root organization (string id "") is served on EXTERNAL_HOST itself: no query is needed.
const root = { id: 1, stringId: "" };
const domain = (externalHost: string) =>
  fakeEmailDomain(null as unknown as Db, root, { externalHost, fakeEmailDomain: "localhost" });

describe("fakeEmailDomain", () => {
  it("is the organization's host, without its port, when it makes a valid address", async () => {
    expect(await domain("chat.example.com:443")).toBe("chat.example.com");
    expect(await domain("zulip.testserver")).toBe("zulip.testserver");
    expect(await domain("localhost:9991")).toBe("localhost");
  });

  it("is FAKE_EMAIL_DOMAIN when the host is an IP address", async () => {
    expect(await domain("127.0.0.1:9991")).toBe("localhost");
    expect(await domain("10.0.0.7")).toBe("localhost");
  });
});
