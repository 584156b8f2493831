/**
 * The sign-up page, /join/<key>/, through HTTP as a browser uses it (GET the form, POST it
 * form-encoded), then the new account through the typed client with the key the page showed:
 * role, channels, groups, Welcome Bot's messages, the referrer's notice, the invitations used
 * and revoked, the events (zerver/tests/test_signup.py, test_invite.py).
 */
import { describe, expect, it } from "vitest";
import { ConfirmationType, InviteStatus } from "../../server/lib/invites/confirmations.ts";
import { Role } from "../../server/lib/users/users.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { createInvitation, createMultiuseInvite } from "../helpers/invitations.ts";
import { startTestServer, useTestServer, type TestServer } from "../helpers/server.ts";

const server = useTestServer();
const userId = (name: string) => server.creds.users[name]!.user_id;
const channelId = (name: string) => server.creds.channels[name]!.stream_id;

async function open(url: string) {
  const response = await fetch(url);
  return { status: response.status, html: await response.text(), headers: response.headers };
}

/** Submits the form as a browser on the server's own origin does. */
async function submit(
  s: Pick<TestServer, "baseUrl">,
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = { Origin: s.baseUrl },
) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: response.status, html: await response.text(), headers: response.headers };
}

const apiKeyIn = (html: string) => /id="api-key">([A-Za-z0-9]{32})</.exec(html)?.[1];
const apiEmailIn = (html: string) => /id="api-email">([^<]+)</.exec(html)?.[1];
const STRONG = "correct horse battery staple 42";

/** An event queue for `as`; `events()` returns what arrived since. */
async function listen(as: string) {
  const { queue_id } = await expectSuccess(
    server.as(as).POST("/register", {
      body: { event_types: ["realm_user", "invites_changed", "user_group", "message"] },
    }),
  );
  return async () =>
    (
      await expectSuccess(
        server.as(as).GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events as Record<string, unknown>[];
}

/** The direct messages the user received, oldest first. */
async function directMessages(client: ReturnType<TestServer["client"]>) {
  const { messages } = await expectSuccess(
    client.GET("/messages", {
      params: {
        query: {
          anchor: "newest",
          num_before: 20,
          num_after: 0,
          narrow: [{ operator: "is", operand: "dm" }],
        },
      },
    }),
  );
  return messages as {
    sender_email: string;
    sender_full_name: string;
    content: string;
    flags: string[];
  }[];
}

async function newGroup(name: string) {
  const { group_id } = await expectSuccess(
    server.as("iago").POST("/user_groups/create", {
      body: { name, description: "", members: [userId("iago")] },
    }),
  );
  return group_id;
}

describe("an email invitation", () => {
  it("shows the form: the invited address, name and password, no terms unless configured", async () => {
    const invite = await createInvitation(server, { email: "form@example.com" });
    const page = await open(invite.url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("cache-control")).toBe("no-store");
    // The URL holds the key: no Referer to other sites, but the form's own Origin still goes out.
    expect(page.headers.get("referrer-policy")).toBe("same-origin");
    expect(page.html).toContain('id="email">form@example.com<');
    expect(page.html).toContain('name="full_name"');
    expect(page.html).toContain('type="password"');
    expect(page.html).not.toContain('name="terms"');
    expect(page.html).not.toMatch(/<script/i);
    // Without the trailing slash too.
    expect((await open(invite.url.replace(/\/$/, ""))).status).toBe(200);
  });

  it("creates the account with the invited role, channels and groups, and tells everyone", async () => {
    const groupId = await newGroup("newcomers");
    const invite = await createInvitation(server, {
      email: "Newbie@Example.com",
      referredBy: "iago",
      invitedAs: Role.MODERATOR,
      streamIds: [channelId("Denmark"), channelId("Scotland")],
      groupIds: [groupId],
    });
    // An older invitation to the same address from someone else, revoked by the sign-up.
    const older = await createInvitation(server, {
      email: "newbie@example.com",
      referredBy: "hamlet",
    });
    const iagoEvents = await listen("iago");
    const hamletEvents = await listen("hamlet");

    const done = await submit(server, invite.url, { full_name: "New Bie", password: STRONG });
    expect(done.status).toBe(200);
    expect(done.headers.get("cache-control")).toBe("no-store");
    const key = apiKeyIn(done.html)!;
    const email = apiEmailIn(done.html)!;
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(done.html).toContain("[api]");
    expect(done.html).toContain('download="zuliprc"');

    const me = await expectSuccess(server.client(email, key).GET("/users/me"));
    expect(me).toMatchObject({ full_name: "New Bie", role: Role.MODERATOR, is_bot: false });
    expect(me.delivery_email).toBe("Newbie@Example.com");

    // Exactly the invited channels (no default channels: the invitation did not ask for them).
    const { subscriptions } = await expectSuccess(
      server.client(email, key).GET("/users/me/subscriptions", { params: { query: {} } }),
    );
    expect(subscriptions.map((s) => s.name).sort()).toEqual(["Denmark", "Scotland"]);

    // The invited group and the role's system group.
    const { user_groups } = await expectSuccess(
      server.client(email, key).GET("/user_groups", { params: { query: {} } }),
    );
    const memberOf = user_groups.filter((g) => g.members.includes(me.user_id)).map((g) => g.name);
    expect(memberOf.sort()).toEqual(["newcomers", "role:moderators"]);

    // Welcome Bot's welcome, starred; Notification Bot tells the referrer.
    const dms = await directMessages(server.client(email, key));
    expect(dms).toHaveLength(1);
    expect(dms[0]).toMatchObject({ sender_full_name: "Welcome Bot" });
    expect(dms[0]!.content).toContain("Hello, and welcome to Zulip!");
    expect(dms[0]!.flags).toContain("starred");
    const iagoDms = await directMessages(server.as("iago"));
    expect(iagoDms.at(-1)).toMatchObject({ sender_full_name: "Notification Bot" });
    expect(iagoDms.at(-1)!.content).toContain("accepted your invitation to join Zulip!");
    expect(iagoDms.at(-1)!.content).toContain("New Bie");

    // The invitation is used and tied to the account; the other one is revoked.
    const rows = await server.db.preregistrationUser.findMany({
      where: { id: { in: [invite.id, older.id] } },
      orderBy: { id: "asc" },
    });
    expect(rows.map((r) => [r.status, r.createdUserId])).toEqual([
      [InviteStatus.USED, me.user_id],
      [InviteStatus.REVOKED, null],
    ]);

    // Events: the new user to everyone, the group memberships, invites_changed to the admins.
    const forIago = await iagoEvents();
    const added = (events: Record<string, unknown>[]) =>
      events.find(
        (e) =>
          e.type === "realm_user" &&
          e.op === "add" &&
          (e.person as { user_id: number }).user_id === me.user_id,
      );
    expect(added(forIago)).toMatchObject({
      person: { full_name: "New Bie", role: Role.MODERATOR, delivery_email: "Newbie@Example.com" },
    });
    expect(forIago.filter((e) => e.type === "invites_changed")).toHaveLength(1);
    const forHamlet = await hamletEvents();
    expect(added(forHamlet)).toBeDefined();
    expect(forHamlet.filter((e) => e.type === "invites_changed")).toHaveLength(0);
    expect(
      forHamlet
        .filter((e) => e.type === "user_group" && e.op === "add_members")
        .map((e) => e.group_id),
    ).toEqual(expect.arrayContaining([groupId]));

    // The link is used now: opening it again shows the "expired" page, not the key.
    const again = await open(invite.url);
    expect(again.status).toBe(404);
    expect(again.html).toContain("The confirmation link has expired or been deactivated.");
    expect(again.html).not.toContain(key);
    const resubmit = await submit(server, invite.url, { full_name: "New Bie", password: STRONG });
    expect(resubmit.status).toBe(404);
    expect(
      await server.db.userProfile.count({ where: { deliveryEmail: "Newbie@Example.com" } }),
    ).toBe(1);
  });

  it("adds the organization's default channels when the invitation asks for them", async () => {
    await server.db.defaultStream.create({
      data: { realmId: server.creds.realm.id, streamId: channelId("Rome") },
    });
    try {
      const invite = await createInvitation(server, {
        email: "defaults@example.com",
        streamIds: [channelId("Venice")],
        includeRealmDefaultSubscriptions: true,
        notifyReferrerOnJoin: false,
      });
      const done = await submit(server, invite.url, {
        full_name: "With Defaults",
        password: STRONG,
      });
      const client = server.client(apiEmailIn(done.html), apiKeyIn(done.html));
      const { subscriptions } = await expectSuccess(
        client.GET("/users/me/subscriptions", { params: { query: {} } }),
      );
      expect(subscriptions.map((s) => s.name).sort()).toEqual(["Rome", "Venice"]);
      // notify_referrer_on_join=false: iago hears nothing of it.
      const last = (await directMessages(server.as("iago"))).at(-1);
      expect(last?.content ?? "").not.toContain("With Defaults");
    } finally {
      await server.db.defaultStream.deleteMany({ where: { streamId: channelId("Rome") } });
    }
  });

  it("sends the invitation's custom welcome text, or the organization's, after the welcome", async () => {
    const custom = await createInvitation(server, {
      email: "custom@example.com",
      welcomeMessageCustomText: "Welcome to **the team**!",
    });
    const a = await submit(server, custom.url, { full_name: "Custom One", password: STRONG });
    const aDms = await directMessages(server.client(apiEmailIn(a.html), apiKeyIn(a.html)));
    expect(aDms.map((m) => m.sender_full_name)).toEqual(["Welcome Bot", "Welcome Bot"]);
    expect(aDms[1]!.content).toContain("<strong>the team</strong>");

    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { welcomeMessageCustomText: "The organization says hi." },
    });
    try {
      const realmText = await createInvitation(server, { email: "realmtext@example.com" });
      const b = await submit(server, realmText.url, { full_name: "Realm Text", password: STRONG });
      const bDms = await directMessages(server.client(apiEmailIn(b.html), apiKeyIn(b.html)));
      expect(bDms[1]!.content).toContain("The organization says hi.");
      // "" on the invitation: no custom message at all.
      const none = await createInvitation(server, {
        email: "nocustom@example.com",
        welcomeMessageCustomText: "",
      });
      const c = await submit(server, none.url, { full_name: "No Custom", password: STRONG });
      expect(
        await directMessages(server.client(apiEmailIn(c.html), apiKeyIn(c.html))),
      ).toHaveLength(1);
    } finally {
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { welcomeMessageCustomText: "" },
      });
    }
  });

  it("announces the new user in the signup announcements channel", async () => {
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { signupAnnouncementsStreamId: channelId("Verona") },
    });
    try {
      const invite = await createInvitation(server, {
        email: "announced@example.com",
        invitedAs: Role.GUEST,
      });
      const done = await submit(server, invite.url, { full_name: "Ann Ounced", password: STRONG });
      const me = await expectSuccess(
        server.client(apiEmailIn(done.html), apiKeyIn(done.html)).GET("/users/me"),
      );
      expect(me.role).toBe(Role.GUEST);
      const { messages } = await expectSuccess(
        server.as("hamlet").GET("/messages", {
          params: {
            query: {
              anchor: "newest",
              num_before: 1,
              num_after: 0,
              narrow: [
                { operator: "channel", operand: "Verona" },
                { operator: "topic", operand: "signups" },
              ],
            },
          },
        }),
      );
      expect(messages[0]).toMatchObject({ sender_full_name: "Notification Bot" });
      expect(messages[0]!.content).toContain("joined this organization.");
    } finally {
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { signupAnnouncementsStreamId: null },
      });
    }
  });

  it("re-shows the form with Zulip's errors for a bad name or a weak password, creating nothing", async () => {
    const invite = await createInvitation(server, { email: "typo@example.com" });
    const cases: [Record<string, string>, string][] = [
      [{ full_name: "", password: STRONG }, "This field is required."],
      [{ full_name: "A", password: STRONG }, "Name too short!"],
      [{ full_name: 'Bad "name" <b>', password: STRONG }, "Invalid characters in name!"],
      [{ full_name: "Fine Name", password: "" }, "This field is required."],
      [{ full_name: "Fine Name", password: "abc" }, "The password is too weak"],
    ];
    for (const [fields, error] of cases) {
      const page = await submit(server, invite.url, fields);
      expect(page.status, JSON.stringify(fields)).toBe(200);
      expect(page.html).toContain(error);
      expect(page.html).toContain('id="registration"');
      expect(apiKeyIn(page.html)).toBeUndefined();
    }
    // What the user typed comes back escaped; the password never does.
    const escaped = await submit(server, invite.url, {
      full_name: 'Bad "name" <b>',
      password: "s3cret-xyz",
    });
    expect(escaped.html).toContain('value="Bad &quot;name&quot; &lt;b&gt;"');
    expect(escaped.html).not.toContain("<b>");
    expect(escaped.html).not.toContain("s3cret-xyz");
    expect(
      await server.db.preregistrationUser.findUniqueOrThrow({ where: { id: invite.id } }),
    ).toMatchObject({ status: InviteStatus.PENDING, createdUserId: null });
    expect(
      await server.db.userProfile.count({ where: { deliveryEmail: "typo@example.com" } }),
    ).toBe(0);
  });

  it("refuses an address that already has an account", async () => {
    const invite = await createInvitation(server, { email: "hamlet@zulip.com" });
    const page = await submit(server, invite.url, { full_name: "Hamlet Again", password: STRONG });
    expect(page.status).toBe(200);
    expect(page.html).toContain("hamlet@zulip.com already has an account");
    expect(apiKeyIn(page.html)).toBeUndefined();
  });

  it("refuses a cross-site submission", async () => {
    const invite = await createInvitation(server, { email: "csrf@example.com" });
    const crossSite: Record<string, string>[] = [
      { Origin: "http://evil.example" },
      { Referer: "http://evil.example/page" },
      { Origin: "null" },
    ];
    for (const headers of crossSite) {
      const page = await submit(
        server,
        invite.url,
        { full_name: "Cross Site", password: STRONG },
        headers,
      );
      expect(page.status).toBe(403);
      expect(page.html).toContain("CSRF verification failed.");
    }
    expect(
      await server.db.userProfile.count({ where: { deliveryEmail: "csrf@example.com" } }),
    ).toBe(0);
  });

  it("creates one account when the form is submitted twice at once", async () => {
    const invite = await createInvitation(server, { email: "twice@example.com" });
    const pages = await Promise.all([
      submit(server, invite.url, { full_name: "Twice Over", password: STRONG }),
      submit(server, invite.url, { full_name: "Twice Over", password: STRONG }),
    ]);
    expect(pages.map((p) => p.status).sort()).toEqual([200, 404]);
    expect(pages.filter((p) => apiKeyIn(p.html))).toHaveLength(1);
    expect(
      await server.db.userProfile.count({ where: { deliveryEmail: "twice@example.com" } }),
    ).toBe(1);
  });
});

describe("links that cannot be used", () => {
  it("shows Zulip's pages, 404, for malformed, unknown, expired and revoked links", async () => {
    const malformed = await open(`${server.baseUrl}/join/not-a-key/`);
    expect(malformed.status).toBe(404);
    expect(malformed.html).toContain("Whoops. The confirmation link is malformed.");

    const unknown = await open(`${server.baseUrl}/join/${"a".repeat(24)}/`);
    expect(unknown.status).toBe(404);
    expect(unknown.html).toContain(
      "Whoops. We couldn't find your confirmation link in the system.",
    );

    const expired = await createInvitation(server, {
      email: "late@example.com",
      expiresInMinutes: -1,
    });
    const expiredPage = await open(expired.url);
    expect(expiredPage.status).toBe(404);
    expect(expiredPage.html).toContain("The confirmation link has expired or been deactivated.");
    expect(
      (await submit(server, expired.url, { full_name: "Too Late", password: STRONG })).status,
    ).toBe(404);

    const revoked = await createInvitation(server, { email: "revoked@example.com" });
    await server.db.preregistrationUser.update({
      where: { id: revoked.id },
      data: { status: InviteStatus.REVOKED },
    });
    expect((await open(revoked.url)).html).toContain("has expired or been deactivated");

    const revokedLink = await createMultiuseInvite(server, {});
    await server.db.multiuseInvite.update({
      where: { id: revokedLink.id },
      data: { status: InviteStatus.REVOKED },
    });
    expect((await open(revokedLink.url)).status).toBe(404);

    // A form body the parser refuses gets a page too, never a stack trace.
    const big = await submit(
      server,
      (await createInvitation(server, { email: "big@example.com" })).url,
      {
        full_name: "x".repeat(100_000),
        password: STRONG,
      },
    );
    expect(big.status).toBe(413);
    expect(big.html).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe("hostile requests", () => {
  it("never answer with a 5xx or anything but a page", async () => {
    const invite = await createInvitation(server, { email: "hostile@example.com" });
    const link = await createMultiuseInvite(server, {});
    const keys = [
      "%00",
      "%E2%80%AE" + "a".repeat(21),
      "A".repeat(24),
      "a".repeat(10_000),
      "..%2F..%2Fetc%2Fpasswd",
      invite.key.toUpperCase(),
    ];
    for (const key of keys) {
      for (const method of ["GET", "POST"]) {
        const response = await fetch(`${server.baseUrl}/join/${key}/`, {
          method,
          ...(method === "POST"
            ? {
                headers: { "Content-Type": "application/x-www-form-urlencoded" },
                body: "full_name=x",
              }
            : {}),
        });
        expect(response.status, `${method} ${key.slice(0, 30)}`).toBe(404);
        expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      }
    }
    const bodies: [string, string][] = [
      ["application/json", JSON.stringify({ full_name: "Json Body", password: STRONG })],
      ["application/x-www-form-urlencoded", "full_name=A&full_name=Two%20Names&password[]=x"],
      ["application/x-www-form-urlencoded", "%ZZ=%ZZ&full_name=%"],
      ["application/x-www-form-urlencoded; charset=latin9", "full_name=x"],
      ["text/plain", "\u0000".repeat(100)],
      [
        "application/x-www-form-urlencoded",
        Array.from({ length: 50 }, (_, i) => `f${i}=1`).join("&"),
      ],
    ];
    for (const url of [invite.url, link.url])
      for (const [type, body] of bodies) {
        const response = await fetch(url, {
          method: "POST",
          headers: { "Content-Type": type },
          body,
        });
        expect(response.status, `${type} ${body.slice(0, 30)}`).toBeLessThan(500);
        expect(response.headers.get("content-type")).toMatch(/^text\/html/);
        expect(apiKeyIn(await response.text())).toBeUndefined();
      }
    expect(
      await server.db.preregistrationUser.findUniqueOrThrow({ where: { id: invite.id } }),
    ).toMatchObject({ status: InviteStatus.PENDING });
  });
});

describe("an invitation link anyone may use", () => {
  it("asks for the address, emails a confirmation link, and that link opens the account form", async () => {
    const groupId = await newGroup("link joiners");
    const link = await createMultiuseInvite(server, {
      invitedAs: Role.GUEST,
      streamIds: [channelId("Venice")],
      groupIds: [groupId],
      welcomeMessageCustomText: "Glad you found the link.",
    });
    const form = await open(link.url);
    expect(form.status).toBe(200);
    expect(form.html).toContain('name="email"');

    expect((await submit(server, link.url, { email: "" })).html).toContain(
      "This field is required.",
    );
    expect((await submit(server, link.url, { email: "not an address" })).html).toContain(
      "Enter a valid email address.",
    );
    expect((await submit(server, link.url, { email: "othello@zulip.com" })).html).toContain(
      "othello@zulip.com already has an account",
    );

    const sent = await submit(server, link.url, { email: "joiner@example.com" });
    expect(sent.status).toBe(200);
    expect(sent.html).toContain("Check your email so we can get started.");
    const mail = await server.db.emailOutbox.findFirstOrThrow({
      where: { toAddress: "joiner@example.com" },
      orderBy: { id: "desc" },
    });
    expect(mail).toMatchObject({
      subject: "Activate your Zulip account",
      templateName: "zerver/emails/confirm_registration",
    });
    const confirmKey = /\/join\/([a-z2-7]{24})\//.exec(mail.textBody)![1]!;
    const confirmation = await server.db.confirmation.findUniqueOrThrow({
      where: { confirmationKey: confirmKey },
    });
    expect(confirmation.type).toBe(ConfirmationType.USER_REGISTRATION);

    const confirmUrl = `${server.baseUrl}/join/${confirmKey}/`;
    expect((await open(confirmUrl)).html).toContain('id="email">joiner@example.com<');
    const done = await submit(server, confirmUrl, { full_name: "Link Joiner", password: STRONG });
    const client = server.client(apiEmailIn(done.html), apiKeyIn(done.html));
    const me = await expectSuccess(client.GET("/users/me"));
    expect(me.role).toBe(Role.GUEST);
    const { subscriptions } = await expectSuccess(
      client.GET("/users/me/subscriptions", { params: { query: {} } }),
    );
    expect(subscriptions.map((s) => s.name)).toEqual(["Venice"]);
    const { user_groups } = await expectSuccess(
      client.GET("/user_groups", { params: { query: {} } }),
    );
    expect(user_groups.find((g) => g.id === groupId)?.members).toContain(me.user_id);
    // The link's custom welcome text follows the address to its account.
    expect((await directMessages(client)).map((m) => m.content).at(-1)).toContain(
      "Glad you found the link.",
    );

    // The link stays usable for other people.
    expect((await open(link.url)).status).toBe(200);
  });
});

describe("terms of service", () => {
  it("asks for them when TERMS_OF_SERVICE_URL is set", async () => {
    const withTerms = await startTestServer({ termsOfServiceUrl: "https://example.com/terms" });
    try {
      const invite = await createInvitation(withTerms, { email: "terms@example.com" });
      const form = await open(invite.url);
      expect(form.html).toContain('name="terms"');
      expect(form.html).toContain('href="https://example.com/terms"');
      const refused = await submit(withTerms, invite.url, {
        full_name: "Terms Reader",
        password: STRONG,
      });
      expect(refused.html).toContain('id="terms-error">This field is required.');
      const accepted = await submit(withTerms, invite.url, {
        full_name: "Terms Reader",
        password: STRONG,
        terms: "on",
      });
      expect(apiKeyIn(accepted.html)).toBeDefined();
    } finally {
      await withTerms.close();
    }
  });
});
