/**
 * Invitations: POST /invites (Zulip's checks in its order, INVITATION_FAILED, the daily limit),
 * GET /invites, DELETE /invites/{id}, POST /invites/{id}/resend, POST /invites/multiuse, DELETE
 * /invites/multiuse/{id}, the queued invitation email and `invites_changed`
 * (zerver/tests/test_invite.py).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { ConfirmationType, InviteStatus } from "../../server/lib/invites/confirmations.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();

const invite = (
  as: string,
  body: Omit<Body<"/invites", "post">, "stream_ids"> & { stream_ids?: number[] },
) => server.as(as).POST("/invites", { body: { stream_ids: [], ...body } });
const createLink = (as: string, body: Body<"/invites/multiuse", "post"> = {}) =>
  server.as(as).POST("/invites/multiuse", { body: body });
const revoke = (as: string, id: number) =>
  server.as(as).DELETE("/invites/{invite_id}", { params: { path: { invite_id: id } } });
const resend = (as: string, id: number) =>
  server.as(as).POST("/invites/{invite_id}/resend", { params: { path: { invite_id: id } } });
const revokeLink = (as: string, id: number) =>
  server.as(as).DELETE("/invites/multiuse/{invite_id}", { params: { path: { invite_id: id } } });
const list = async (as: string) => (await expectSuccess(server.as(as).GET("/invites"))).invites;
const userId = (name: string) => server.creds.users[name]!.user_id;
const channelId = (name: string) => server.creds.channels[name]!.stream_id;
const prereg = (email: string) =>
  server.db.preregistrationUser.findFirst({
    where: { email },
    include: { streams: true, groups: true },
    orderBy: { id: "desc" },
  });
const outbox = (to: string) =>
  server.db.emailOutbox.findMany({ where: { toAddress: to }, orderBy: { id: "asc" } });
const realmId = () => server.creds.realm.id;

async function openQueue(as: string) {
  return (
    await expectSuccess(
      server.as(as).POST("/register", { body: { event_types: ["invites_changed"] } }),
    )
  ).queue_id!;
}
async function invitesChanged(as: string, queueId: string) {
  const events = (
    await expectSuccess(
      server.as(as).GET("/events", {
        params: { query: { queue_id: queueId, last_event_id: -1, dont_block: true } },
      }),
    )
  ).events as any[];
  return events.filter((e) => e.type === "invites_changed");
}

const realmRestore: Record<string, unknown> = {};
async function setRealm(data: Record<string, unknown>) {
  const before = (await server.db.realm.findUniqueOrThrow({ where: { id: realmId() } })) as any;
  for (const k of Object.keys(data)) if (!(k in realmRestore)) realmRestore[k] = before[k];
  await server.db.realm.update({ where: { id: realmId() }, data });
}
afterEach(async () => {
  if (Object.keys(realmRestore).length) {
    await server.db.realm.update({ where: { id: realmId() }, data: realmRestore });
    for (const k of Object.keys(realmRestore)) delete realmRestore[k];
  }
});

describe("POST /invites", () => {
  it("invites each address once, with channels and groups, queues its email and tells the administrators", async () => {
    const [iagoQ, hamletQ, cordeliaQ] = await Promise.all(
      ["iago", "hamlet", "cordelia"].map((u) => openQueue(u)),
    );
    const { group_id } = await expectSuccess(
      server.as("iago").POST("/user_groups/create", {
        body: { name: "newcomers", description: "", members: [] },
      }),
    );
    const before = Date.now();
    await expectSuccess(
      invite("hamlet", {
        invitee_emails: "alice@example.com, Bob Smith <bob@example.com>\nalice@example.com",
        stream_ids: [channelId("Verona")],
        notify_referrer_on_join: false,
      }),
    );
    await expectSuccess(
      invite("iago", {
        invitee_emails: "carol@example.com",
        stream_ids: [channelId("Denmark"), channelId("core team")],
        group_ids: [group_id],
        invite_as: 300,
        include_realm_default_subscriptions: true,
      }),
    );
    const alice = (await prereg("alice@example.com"))!;
    expect(alice).toMatchObject({
      realmId: realmId(),
      referredById: userId("hamlet"),
      invitedAs: 400,
      status: InviteStatus.PENDING,
      notifyReferrerOnJoin: false,
      includeRealmDefaultSubscriptions: false,
      welcomeMessageCustomText: null,
    });
    expect(alice.streams.map((s) => s.streamId)).toEqual([channelId("Verona")]);
    expect(
      await server.db.preregistrationUser.count({ where: { email: "alice@example.com" } }),
    ).toBe(1);
    // Ten days, the default INVITATION_LINK_VALIDITY_MINUTES.
    const expiry = alice.expiryDate!.getTime();
    expect(expiry).toBeGreaterThanOrEqual(before + 14_400 * 60_000 - 1000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 14_400 * 60_000);
    const carol = (await prereg("carol@example.com"))!;
    expect(carol).toMatchObject({ invitedAs: 300, includeRealmDefaultSubscriptions: true });
    expect(carol.streams.map((s) => s.streamId).sort()).toEqual(
      [channelId("Denmark"), channelId("core team")].sort(),
    );
    expect(carol.groups.map((g) => g.userGroupId)).toEqual([group_id]);

    // The email: Zulip's invitation, with the referrer, the organization and the link.
    const confirmation = await server.db.confirmation.findFirstOrThrow({
      where: { type: ConfirmationType.INVITATION, objectId: alice.id },
    });
    expect(confirmation.expiryDate).toEqual(alice.expiryDate);
    const link = `http://zulip.testserver/join/${confirmation.confirmationKey}/`;
    const [mail, ...more] = await outbox("alice@example.com");
    expect(more).toEqual([]);
    expect(mail).toMatchObject({
      realmId: realmId(),
      templateName: "zerver/emails/invitation",
      subject: `King Hamlet has invited you to join ${server.creds.realm.name}`,
    });
    expect(mail!.textBody).toContain(
      "King Hamlet (hamlet@zulip.com) wants you to join them on Zulip -- the team communication tool designed for productivity.",
    );
    expect(mail!.textBody).toContain(`<${link}>`);
    expect(mail!.textBody).toContain("This invitation expires on");
    expect(mail!.htmlBody).toContain(`href="${link}"`);
    expect(await outbox("bob@example.com")).toHaveLength(1);

    // Administrators, and the referrer, are told to fetch the list again; others are not.
    expect(await invitesChanged("iago", iagoQ!)).toHaveLength(2);
    expect(await invitesChanged("hamlet", hamletQ!)).toHaveLength(1);
    expect(await invitesChanged("cordelia", cordeliaQ!)).toHaveLength(0);
  });

  it("escapes the names it puts in the HTML email", async () => {
    await server.db.realm.update({
      where: { id: realmId() },
      data: { name: "R&D <team>" },
    });
    try {
      await expectSuccess(invite("iago", { invitee_emails: "html@example.com" }));
    } finally {
      await server.db.realm.update({
        where: { id: realmId() },
        data: { name: server.creds.realm.name },
      });
    }
    const [mail] = await outbox("html@example.com");
    expect(mail!.subject).toBe("Iago has invited you to join R&D <team>");
    expect(mail!.htmlBody).toContain("R&amp;D &lt;team&gt;");
    expect(mail!.htmlBody).not.toContain("<team>");
  });

  it("checks the caller and the role in Zulip's order", async () => {
    await expectError(
      invite("polonius", { invitee_emails: "g@example.com" }),
      400,
      "Not allowed for guest users",
    );
    await expectError(
      invite("iago", { invitee_emails: "o1@example.com", invite_as: 100 }),
      400,
      "Must be an organization owner",
      { code: "UNAUTHORIZED_PRINCIPAL" },
    );
    for (const role of [200, 300] as const)
      await expectError(
        invite("hamlet", { invitee_emails: "a1@example.com", invite_as: role }),
        400,
        "Must be an organization administrator",
      );
    await expectError(
      invite("shiva", { invitee_emails: "a2@example.com", invite_as: 300 }),
      400,
      "Must be an organization administrator",
    );
    await expectError(
      invite("hamlet", { invitee_emails: "a3@example.com", invite_as: untyped(10) }),
      400,
      "Invalid invite_as: Value error, Not in the list of possible values",
    );
    await expectSuccess(invite("desdemona", { invitee_emails: "o2@example.com", invite_as: 100 }));
    await expectSuccess(invite("iago", { invitee_emails: "a4@example.com", invite_as: 200 }));
    expect((await prereg("o2@example.com"))!.invitedAs).toBe(100);
    // The role comes before the addresses.
    await expectError(
      invite("hamlet", { invitee_emails: "", invite_as: 200 }),
      400,
      "Must be an organization administrator",
    );
    await expectError(
      invite("hamlet", { invitee_emails: "" }),
      400,
      "You must specify at least one email address.",
    );
  });

  it("follows can_invite_users_group", async () => {
    const admins = await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId: realmId(), name: "role:administrators" },
    });
    await setRealm({ canInviteUsersGroupId: admins.id });
    await expectError(
      invite("hamlet", { invitee_emails: "p1@example.com" }),
      400,
      "Insufficient permission",
    );
    await expectSuccess(invite("iago", { invitee_emails: "p2@example.com" }));
    expect(await prereg("p1@example.com")).toBeNull();
  });

  it("takes welcome_message_custom_text from administrators only", async () => {
    await expectError(
      invite("hamlet", { invitee_emails: "w1@example.com", welcome_message_custom_text: "Hi" }),
      400,
      "Must be an organization administrator",
    );
    await expectError(
      invite("iago", {
        invitee_emails: "w2@example.com",
        welcome_message_custom_text: "é".repeat(8001),
      }),
      400,
      "welcome_message_custom_text is too long (limit: 8000 characters)",
    );
    await expectSuccess(
      invite("iago", {
        invitee_emails: "w3@example.com, w4@example.com",
        welcome_message_custom_text: "é".repeat(8000),
      }),
    );
    await expectSuccess(
      invite("iago", { invitee_emails: "w5@example.com", welcome_message_custom_text: "" }),
    );
    await expectError(
      invite("iago", { invitee_emails: "w6@example.com", welcome_message_custom_text: "a\0" }),
      400,
      "Invalid character in welcome message, at position 2.",
    );
    expect((await prereg("w3@example.com"))!.welcomeMessageCustomText).toBe("é".repeat(8000));
    expect((await prereg("w5@example.com"))!.welcomeMessageCustomText).toBe("");
  });

  it("checks the channels: accessible, and default or ones the caller may add subscribers to", async () => {
    await expectError(
      invite("hamlet", { invitee_emails: "c1@example.com", stream_ids: [99999] }),
      400,
      "Invalid channel ID 99999. No invites were sent.",
    );
    await expectError(
      invite("hamlet", {
        invitee_emails: "c1@example.com",
        stream_ids: [channelId("Verona"), channelId("core team")],
      }),
      400,
      `Invalid channel ID ${channelId("core team")}. No invites were sent.`,
    );
    const admins = await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId: realmId(), name: "role:administrators" },
    });
    await setRealm({ canAddSubscribersGroupId: admins.id });
    await expectError(
      invite("hamlet", { invitee_emails: "c1@example.com", stream_ids: [channelId("Verona")] }),
      400,
      "You do not have permission to subscribe other users to channels.",
    );
    // A default channel is allowed whoever invites (Zulip 10.0, feature level 342).
    const d = await server.db.defaultStream.create({
      data: { realmId: realmId(), streamId: channelId("Denmark") },
    });
    try {
      await expectSuccess(
        invite("hamlet", { invitee_emails: "c2@example.com", stream_ids: [channelId("Denmark")] }),
      );
    } finally {
      await server.db.defaultStream.delete({ where: { id: d.id } });
    }
    await expectSuccess(invite("hamlet", { invitee_emails: "c3@example.com", stream_ids: [] }));
    expect(await prereg("c1@example.com")).toBeNull();
  });

  it("checks the groups", async () => {
    await expectError(
      invite("iago", { invitee_emails: "g1@example.com", group_ids: [5678] }),
      400,
      "Invalid user group",
    );
    const { group_id } = await expectSuccess(
      server.as("iago").POST("/user_groups/create", {
        body: { name: "closed", description: "", members: [] },
      }),
    );
    await expectError(
      invite("hamlet", { invitee_emails: "g1@example.com", group_ids: [group_id] }),
      400,
      "Insufficient permission",
    );
    expect(await prereg("g1@example.com")).toBeNull();
  });

  it("refuses the whole request when an address is invalid or not allowed here", async () => {
    const { error } = await expectError(
      invite("iago", { invitee_emails: "noatsign.com, ok1@example.com, hamlet@zulip.com" }),
      400,
      "Some emails did not validate, so we didn't send any invitations.",
      {
        code: "INVITATION_FAILED",
        sent_invitations: false,
        daily_limit_reached: false,
        license_limit_reached: false,
      },
    );
    expect(error.errors).toEqual([
      ["noatsign.com", "Invalid address.", false],
      ["hamlet@zulip.com", "Already has an account.", false],
    ]);
    expect(await prereg("ok1@example.com")).toBeNull();
    expect(await outbox("ok1@example.com")).toEqual([]);

    // disallow_disposable_email_addresses (on by default).
    const disposable = await expectError(
      invite("iago", { invitee_emails: "someone@mailinator.com" }),
      400,
      "Some emails did not validate, so we didn't send any invitations.",
    );
    expect(disposable.error.errors).toEqual([
      ["someone@mailinator.com", "Please use your real email address.", false],
    ]);
    await setRealm({ disallowDisposableEmailAddresses: false });
    await expectSuccess(invite("iago", { invitee_emails: "someone@mailinator.com" }));

    // An organization restricted to its domains.
    await setRealm({ emailsRestrictedToDomains: true });
    const domain = await server.db.realmDomain.create({
      data: { realmId: realmId(), domain: "zulip.com", allowSubdomains: true },
    });
    try {
      const restricted = await expectError(
        invite("iago", {
          invitee_emails: "x@outside.example.com, a+b@zulip.com, sub@dev.zulip.com",
        }),
        400,
        "Some emails did not validate, so we didn't send any invitations.",
      );
      expect(restricted.error.errors).toEqual([
        ["x@outside.example.com", "Outside your domain.", false],
        ["a+b@zulip.com", "Email addresses containing + are not allowed.", false],
      ]);
      await expectSuccess(invite("iago", { invitee_emails: "sub@dev.zulip.com" }));
    } finally {
      await server.db.realmDomain.delete({ where: { id: domain.id } });
    }
  });

  it("skips existing users: INVITATION_FAILED, the others invited in the same transaction", async () => {
    const none = await expectError(
      invite("iago", { invitee_emails: "hAmLeT@zUlIp.com" }),
      400,
      "We weren't able to invite anyone.",
      { code: "INVITATION_FAILED", sent_invitations: false, daily_limit_reached: false },
    );
    expect(none.error.errors).toEqual([["hAmLeT@zUlIp.com", "Already has an account.", false]]);

    await server.db.userProfile.update({
      where: { id: userId("prospero") },
      data: { isActive: false },
    });
    try {
      const queue = await openQueue("desdemona");
      const some = await expectError(
        invite("iago", {
          invitee_emails:
            "othello@zulip.com, new1@example.com, prospero@zulip.com, notification-bot@zulip.com",
        }),
        400,
        "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
        {
          code: "INVITATION_FAILED",
          sent_invitations: true,
          daily_limit_reached: false,
          license_limit_reached: false,
        },
      );
      expect(some.error.errors).toEqual([
        ["othello@zulip.com", "Already has an account.", false],
        ["prospero@zulip.com", "Account has been deactivated.", true],
        ["notification-bot@zulip.com", "Reserved for system bots.", false],
      ]);
      expect((await prereg("new1@example.com"))!.status).toBe(InviteStatus.PENDING);
      expect(await outbox("new1@example.com")).toHaveLength(1);
      expect(await prereg("othello@zulip.com")).toBeNull();
      expect(await invitesChanged("desdemona", queue)).toHaveLength(1);
    } finally {
      await server.db.userProfile.update({
        where: { id: userId("prospero") },
        data: { isActive: true },
      });
    }
  });

  it("sets the expiry from invite_expires_in_minutes; null never expires", async () => {
    await expectSuccess(
      invite("iago", { invitee_emails: "e1@example.com", invite_expires_in_minutes: null }),
    );
    await expectSuccess(
      invite("iago", { invitee_emails: "e2@example.com", invite_expires_in_minutes: 60 }),
    );
    const invites = await list("iago");
    expect(invites.find((i) => i.email === "e1@example.com")!.expiry_date).toBeNull();
    const e2 = invites.find((i) => i.email === "e2@example.com")!;
    expect(e2.expiry_date! - e2.invited).toBe(3600);
    expect((await outbox("e1@example.com"))[0]!.textBody).toContain(
      "This invitation does not expire.",
    );
    // An expired invitation is no longer listed.
    await server.db.preregistrationUser.updateMany({
      where: { email: "e2@example.com" },
      data: { expiryDate: new Date(Date.now() - 1000) },
    });
    expect((await list("iago")).some((i) => i.email === "e2@example.com")).toBe(false);
  });

  it("limits the invitations an organization sends in a day, resends included", async () => {
    const recent = await server.db.emailOutbox.count({
      where: { realmId: realmId(), templateName: "zerver/emails/invitation" },
    });
    await setRealm({ maxInvites: recent + 1 });
    const { error } = await expectError(
      invite("iago", { invitee_emails: "l1@example.com, l2@example.com" }),
      400,
      "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
      {
        code: "INVITATION_FAILED",
        sent_invitations: false,
        daily_limit_reached: true,
        license_limit_reached: false,
      },
    );
    expect(error.errors).toEqual([]);
    expect(await prereg("l1@example.com")).toBeNull();
    await expectSuccess(invite("iago", { invitee_emails: "l1@example.com" }));
    const l1 = (await prereg("l1@example.com"))!;
    await expectError(
      resend("iago", l1.id),
      400,
      "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
      { daily_limit_reached: true },
    );
    expect(await outbox("l1@example.com")).toHaveLength(1);

    // Without an organization maximum, INVITES_DEFAULT_REALM_DAILY_MAX applies.
    await setRealm({ maxInvites: null });
    const config = server.deps.config;
    const defaultMax = config.invitesDefaultRealmDailyMax;
    config.invitesDefaultRealmDailyMax = recent + 1;
    try {
      await expectError(
        invite("iago", { invitee_emails: "l3@example.com" }),
        400,
        "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
      );
    } finally {
      config.invitesDefaultRealmDailyMax = defaultMax;
    }
    await expectSuccess(invite("iago", { invitee_emails: "l3@example.com" }));
  });
});

describe("POST /invites in an organization anyone may join", () => {
  it("refuses invitations from accounts younger than INVITES_MIN_USER_AGE_DAYS, administrators aside", async () => {
    await setRealm({ inviteRequired: false });
    const joined = (
      await server.db.userProfile.findUniqueOrThrow({ where: { id: userId("othello") } })
    ).dateJoined;
    await server.db.userProfile.update({
      where: { id: userId("othello") },
      data: { dateJoined: new Date(Date.now() - 2 * 86_400_000) },
    });
    try {
      const { error } = await expectError(
        invite("othello", { invitee_emails: "young@example.com" }),
        400,
        "Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.",
        { code: "INVITATION_FAILED", sent_invitations: false, daily_limit_reached: false },
      );
      expect(error.errors).toEqual([]);
      expect(await prereg("young@example.com")).toBeNull();
      await expectSuccess(invite("iago", { invitee_emails: "young@example.com" }));
      await server.db.userProfile.update({
        where: { id: userId("othello") },
        data: { dateJoined: new Date(Date.now() - 4 * 86_400_000) },
      });
      await expectSuccess(invite("othello", { invitee_emails: "young2@example.com" }));
    } finally {
      await server.db.userProfile.update({
        where: { id: userId("othello") },
        data: { dateJoined: joined },
      });
    }
  });

  it("lets only one of two concurrent requests pass the daily limit", async () => {
    const recent = await server.db.emailOutbox.count({
      where: { realmId: realmId(), templateName: "zerver/emails/invitation" },
    });
    await setRealm({ maxInvites: recent + 1 });
    const results = await Promise.all(
      ["race1@example.com", "race2@example.com"].map((e) => invite("iago", { invitee_emails: e })),
    );
    expect(results.map((r) => r.response.status).sort()).toEqual([200, 400]);
    expect(
      await server.db.preregistrationUser.count({
        where: { email: { in: ["race1@example.com", "race2@example.com"] } },
      }),
    ).toBe(1);
  });
});

describe("POST /invites statements", () => {
  it("costs the same statements for ten addresses as for one", async () => {
    // A first request warms the caches (permissions, the organization's URL).
    await expectSuccess(
      invite("iago", { invitee_emails: "warm@example.com", stream_ids: [channelId("Verona")] }),
    );
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      await expectSuccess(
        invite("iago", { invitee_emails: "s0@example.com", stream_ids: [channelId("Verona")] }),
      );
      const ten = Array.from({ length: 10 }, (_, i) => `s${i + 1}@example.com`).join(",");
      await expectSuccess(
        invite("iago", { invitee_emails: ten, stream_ids: [channelId("Verona")] }),
      );
    } finally {
      server.deps.observe = undefined;
    }
    const [one, many] = seen.filter((i) => i.operationId === "send-invites");
    expect(many!.statements).toBe(one!.statements);
  });
});

describe("GET /invites", () => {
  it("lists what the caller may manage: everything for administrators, their own for others", async () => {
    await expectSuccess(invite("cordelia", { invitee_emails: "mine@example.com" }));
    await expectSuccess(invite("othello", { invitee_emails: "theirs@example.com" }));
    const own = await list("cordelia");
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((i) => i.invited_by_user_id === userId("cordelia"))).toBe(true);
    const mine = own.find((i) => i.email === "mine@example.com")!;
    expect(mine).toEqual({
      id: (await prereg("mine@example.com"))!.id,
      email: "mine@example.com",
      invited_by_user_id: userId("cordelia"),
      invited: expect.any(Number),
      expiry_date: mine.invited + 14_400 * 60,
      invited_as: 400,
      is_multiuse: false,
      notify_referrer_on_join: true,
    });
    const all = await list("iago");
    expect(all.map((i) => i.email)).toEqual(
      expect.arrayContaining(["mine@example.com", "theirs@example.com"]),
    );
    await expectError(server.as("polonius").GET("/invites"), 400, "Not allowed for guest users");
  });
});

describe("DELETE /invites/{invite_id} and POST /invites/{invite_id}/resend", () => {
  it("revokes: the referrer, or an administrator (an owner for an owner's invitation)", async () => {
    await expectSuccess(invite("hamlet", { invitee_emails: "r1@example.com, r2@example.com" }));
    await expectSuccess(invite("desdemona", { invitee_emails: "r3@example.com", invite_as: 100 }));
    const [r1, r2, r3] = await Promise.all(
      ["r1@example.com", "r2@example.com", "r3@example.com"].map(async (e) => (await prereg(e))!),
    );
    await expectError(revoke("cordelia", r1!.id), 400, "Must be an organization administrator");
    await expectError(revoke("polonius", r1!.id), 400, "Not allowed for guest users");
    await expectError(revoke("iago", r3!.id), 400, "Must be an organization owner", {
      code: "UNAUTHORIZED_PRINCIPAL",
    });
    const [iagoQ, hamletQ] = await Promise.all(["iago", "hamlet"].map((u) => openQueue(u)));
    await expectSuccess(revoke("hamlet", r1!.id));
    await expectSuccess(revoke("iago", r2!.id));
    await expectSuccess(revoke("desdemona", r3!.id));
    for (const r of [r1, r2, r3])
      expect(
        (await server.db.preregistrationUser.findUniqueOrThrow({ where: { id: r!.id } })).status,
      ).toBe(InviteStatus.REVOKED);
    expect(await invitesChanged("iago", iagoQ!)).toHaveLength(3);
    expect(await invitesChanged("hamlet", hamletQ!)).toHaveLength(2);
    expect((await list("iago")).some((i) => i.id === r1!.id && !i.is_multiuse)).toBe(false);
    await expectError(revoke("hamlet", r1!.id), 400, "No such invitation");
    await expectError(revoke("iago", 999_999), 400, "No such invitation");
    await expectError(resend("hamlet", r1!.id), 400, "No such invitation");
  });

  it("resends the same link, expiry unchanged, in the referrer's name", async () => {
    await expectSuccess(invite("hamlet", { invitee_emails: "again@example.com" }));
    const p = (await prereg("again@example.com"))!;
    await expectError(resend("othello", p.id), 400, "Must be an organization administrator");
    await expectSuccess(resend("hamlet", p.id));
    await expectSuccess(resend("iago", p.id));
    const mails = await outbox("again@example.com");
    expect(mails).toHaveLength(3);
    expect(mails[2]!.textBody).toBe(mails[0]!.textBody);
    expect(mails[2]!.subject).toContain("King Hamlet has invited you");
    expect(
      (await server.db.preregistrationUser.findUniqueOrThrow({ where: { id: p.id } })).expiryDate,
    ).toEqual(p.expiryDate);
  });
});

describe("POST /invites/multiuse and DELETE /invites/multiuse/{invite_id}", () => {
  it("creates a reusable link with its role, channels, groups and expiry, for create_multiuse_invite_group", async () => {
    await expectError(createLink("polonius"), 400, "Not allowed for guest users");
    await expectError(createLink("hamlet"), 400, "Insufficient permission");
    await expectError(createLink("iago", { invite_as: 100 }), 400, "Must be an organization owner");
    await expectError(
      createLink("iago", { stream_ids: [99999] }),
      400,
      "Invalid channel ID 99999. No invites were sent.",
    );
    const queue = await openQueue("desdemona");
    const { invite_link } = await expectSuccess(
      createLink("iago", {
        invite_as: 600,
        stream_ids: [channelId("Verona")],
        invite_expires_in_minutes: 120,
        welcome_message_custom_text: "Welcome, guest",
      }),
    );
    const key = /^http:\/\/zulip\.testserver\/join\/([a-z2-7]{24})\/$/.exec(invite_link)![1]!;
    const confirmation = await server.db.confirmation.findUniqueOrThrow({
      where: { confirmationKey: key },
    });
    expect(confirmation.type).toBe(ConfirmationType.MULTIUSE_INVITE);
    const link = await server.db.multiuseInvite.findUniqueOrThrow({
      where: { id: confirmation.objectId },
      include: { streams: true },
    });
    expect(link).toMatchObject({
      referredById: userId("iago"),
      invitedAs: 600,
      status: InviteStatus.PENDING,
      welcomeMessageCustomText: "Welcome, guest",
    });
    expect(link.streams.map((s) => s.streamId)).toEqual([channelId("Verona")]);
    expect((await list("iago")).find((i) => i.is_multiuse && i.id === link.id)).toEqual({
      id: link.id,
      invited_by_user_id: userId("iago"),
      invited: expect.any(Number),
      expiry_date: expect.any(Number),
      invited_as: 600,
      is_multiuse: true,
      link_url: invite_link,
    });
    expect(await invitesChanged("desdemona", queue)).toHaveLength(1);
    expect(await server.db.emailOutbox.count({ where: { textBody: { contains: key } } })).toBe(0);

    // A member allowed to create links sees their own only.
    const members = await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId: realmId(), name: "role:members" },
    });
    await setRealm({ createMultiuseInviteGroupId: members.id });
    await expectError(
      createLink("hamlet", { welcome_message_custom_text: "x" }),
      400,
      "Must be an organization administrator",
    );
    await expectSuccess(createLink("hamlet"));
    expect((await list("hamlet")).filter((i) => i.is_multiuse)).toHaveLength(1);
  });

  it("revokes a link: its creator or an administrator; twice is refused", async () => {
    const linkId = async (as: string, body: Body<"/invites/multiuse", "post">) => {
      const { invite_link } = await expectSuccess(createLink(as, body));
      const key = invite_link.split("/").at(-2)!;
      return (await server.db.confirmation.findUniqueOrThrow({ where: { confirmationKey: key } }))
        .objectId;
    };
    const id = await linkId("desdemona", { invite_as: 100 });
    const members = await linkId("desdemona", {});
    // As Zulip's check_role_based_permissions: the owner rule first, then the administrator one.
    await expectError(revokeLink("hamlet", id), 400, "Must be an organization owner");
    await expectError(revokeLink("iago", id), 400, "Must be an organization owner");
    await expectError(revokeLink("hamlet", members), 400, "Must be an organization administrator");
    await expectSuccess(revokeLink("iago", members));
    await expectError(revokeLink("iago", 999_999), 400, "No such invitation");
    const queue = await openQueue("iago");
    await expectSuccess(revokeLink("desdemona", id));
    expect(await invitesChanged("iago", queue)).toHaveLength(1);
    expect((await server.db.multiuseInvite.findUniqueOrThrow({ where: { id } })).status).toBe(
      InviteStatus.REVOKED,
    );
    expect((await list("desdemona")).some((i) => i.is_multiuse && i.id === id)).toBe(false);
    await expectError(revokeLink("desdemona", id), 400, "Invitation has already been revoked");
  });
});
