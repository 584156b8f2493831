/**
 * Organizations are isolated: every query is scoped by realm, and a request's realm comes from
 * its Host's subdomain (the default organization answers any other host).
 */
import { describe, expect, it } from "vitest";
import { doCreateRealm } from "../../server/actions/realm/realm.ts";
import { doCreateUser } from "../../server/actions/users/users.ts";
import { checkSendMessage } from "../../server/actions/messages/messages.ts";
import { doCreateChannel } from "../../server/actions/channels/channels.ts";
import { doSubscribe } from "../../server/actions/channels/subscriptions.ts";
import { actAs } from "../../server/manage/context.ts";
import { fakeEmailDomain } from "../../server/lib/realm/realm.ts";
import { requestOnHost } from "../helpers/net.ts";
import { expectError } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();

const get = (path: string, host: string, email: string, apiKey: string) =>
  requestOnHost(server.baseUrl, "GET", path, host, email, apiKey);

async function createSecondOrganization() {
  const { realm, owner } = await server.db.$transaction(async (tx) => {
    const realm = await doCreateRealm(tx, { name: "Second", stringId: "second" });
    const owner = await doCreateUser(
      tx,
      realm,
      { email: "hamlet@zulip.com", fullName: "Other Hamlet", role: 100 },
      "second.zulip.testserver",
    );
    const channel = await doCreateChannel(tx, realm.id, { name: "Verona" });
    await doSubscribe(tx, realm.id, channel, [owner.id]);
    return { realm, owner };
  });
  const { id } = await checkSendMessage(actAs(server.deps, realm, owner), {
    target: { kind: "channel", streamName: "Verona", topic: "t" },
    content: "elsewhere",
    clientName: "test",
  });
  return { realm, owner, messageId: id };
}

describe("a second organization on the same server", () => {
  it("has its own users, channels and messages, reached by its subdomain", async () => {
    const { realm, owner, messageId } = await createSecondOrganization();
    const host = "second.zulip.testserver";
    // The same address names a different user in each organization.
    const mine = await get("/users/me", host, "hamlet@zulip.com", owner.apiKey);
    expect(mine).toMatchObject({
      status: 200,
      body: { user_id: owner.id, full_name: "Other Hamlet" },
    });
    const message = await get(`/messages/${messageId}`, host, "hamlet@zulip.com", owner.apiKey);
    expect(message.body.message).toMatchObject({
      sender_realm_str: "second",
      display_recipient: "Verona",
      content: "<p>elsewhere</p>",
    });

    // Nothing crosses over: the first organization's hamlet cannot see it, and the other key is refused here.
    await expectError(
      server
        .as("hamlet")
        .GET("/messages/{message_id}", { params: { path: { message_id: messageId } } }),
      400,
      "Invalid message(s)",
    );
    const members = (await get("/users", host, "hamlet@zulip.com", owner.apiKey)).body.members;
    expect(members.map((m: { user_id: number }) => m.user_id)).toEqual([owner.id]);
    // Its URL and dummy-email domain are its subdomain of the server's host (Realm.host).
    const settings = await get("/server_settings", host, "hamlet@zulip.com", owner.apiKey);
    expect(settings.body).toMatchObject({
      realm_url: "http://second.zulip.testserver",
      realm_name: "Second",
    });
    const root = await get(
      "/server_settings",
      "zulip.testserver",
      "hamlet@zulip.com",
      owner.apiKey,
    );
    expect(root.body).toMatchObject({
      realm_url: "http://zulip.testserver",
      realm_name: "Zulip Dev",
    });
    expect(await fakeEmailDomain(server.db, realm, server.deps.config)).toBe(
      "second.zulip.testserver",
    );
    const refused = await get("/users/me", "zulip.testserver", "hamlet@zulip.com", owner.apiKey);
    expect(refused).toMatchObject({
      status: 401,
      body: { msg: "Account is not associated with this subdomain" },
    });
  });
});
