/**
 * Code playgrounds (zerver/tests/test_realm_playgrounds.py): POST /realm/playgrounds and
 * DELETE /realm/playgrounds/{playground_id}, Zulip's checks and texts, register's
 * `realm_playgrounds` and the `realm_playgrounds` event.
 */
import { describe, expect, it } from "vitest";
import { asUser, ofType, openQueue } from "../helpers/builders.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();
const user = (name: string) => server.creds.users[name]!;
const basic = (name: string) =>
  "Basic " + Buffer.from(`${user(name).email}:${user(name).api_key}`).toString("base64");
const add = (as: string, body: { name: string; pygments_language: string; url_template: string }) =>
  server.as(as).POST("/realm/playgrounds", { body });
const python = (name: string) => ({
  name,
  pygments_language: "Python",
  url_template: "https://python.example.com?code={code}",
});

describe("POST /realm/playgrounds", () => {
  it("adds a playground, stripped, tells everyone the whole list, and register lists it", async () => {
    const queue = await openQueue(asUser(server, "hamlet"), { event_types: ["realm_playgrounds"] });
    const { id } = await expectSuccess(
      add("iago", {
        name: "  Python playground ",
        pygments_language: " Python ",
        url_template: " https://python.example.com?code={code} ",
      }),
    );
    const [event] = ofType(await queue.nextEvents(), "realm_playgrounds");
    const added = {
      id,
      name: "Python playground",
      pygments_language: "Python",
      url_template: "https://python.example.com?code={code}",
    };
    expect(event?.realm_playgrounds).toContainEqual(added);
    const state = await expectSuccess(
      server
        .as("othello")
        .POST("/register", { body: { fetch_event_types: ["realm_playgrounds"] } }),
    );
    expect(state.realm_playgrounds).toContainEqual(added);
  });

  it("takes a form body with + for spaces", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/realm/playgrounds`, {
      method: "POST",
      headers: {
        Authorization: basic("iago"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "name=Rust+playground&pygments_language=Rust&url_template=https%3A%2F%2Fplay.rust-lang.org%2F%3Fcode%3D%7Bcode%7D",
    });
    expect(response.status).toBe(200);
    const { id } = (await response.json()) as { id: number };
    expect(await server.db.realmPlayground.findUnique({ where: { id } })).toMatchObject({
      name: "Rust playground",
      urlTemplate: "https://play.rust-lang.org/?code={code}",
    });
  });

  it("refuses with Zulip's texts, changing nothing", async () => {
    const before = await server.db.realmPlayground.count();
    const refused = async (body: Parameters<typeof add>[1], msg: string) =>
      expectError(add("iago", body), 400, msg);
    await refused(
      { ...python("x"), pygments_language: "a".repeat(41) },
      "pygments_language is too long (limit: 40 characters)",
    );
    await refused(
      { ...python("x"), pygments_language: "py!" },
      "Invalid characters in pygments language",
    );
    await refused(
      { ...python("x"), pygments_language: "py thon" },
      "Invalid characters in pygments language",
    );
    await refused(
      { ...python("x"), url_template: "https://x.example.com/{code" },
      "Invalid URL template.",
    );
    await refused(
      { ...python("x"), url_template: "https://x.example.com/" },
      'Missing the required variable "code" in the URL template',
    );
    await refused(
      { ...python("x"), url_template: "https://x.example.com/{code}/{lang}" },
      '"code" should be the only variable present in the URL template',
    );
    await refused({ ...python("  ") }, "This field cannot be blank.");
    await expectSuccess(add("iago", python("Twice")));
    await refused(
      python("Twice"),
      "Realm playground with this Realm, Pygments language and Name already exists.",
    );
    await expectError(add("hamlet", python("y")), 400, "Must be an organization administrator");
    expect(await server.db.realmPlayground.count()).toBe(before + 1);
  });
});

describe("DELETE /realm/playgrounds/{playground_id}", () => {
  it("removes it and tells everyone the list without it", async () => {
    const { id } = await expectSuccess(add("iago", python("Doomed")));
    const queue = await openQueue(asUser(server, "hamlet"), { event_types: ["realm_playgrounds"] });
    await expectSuccess(
      server.as("desdemona").DELETE("/realm/playgrounds/{playground_id}", {
        params: { path: { playground_id: id } },
      }),
    );
    const [event] = ofType(await queue.nextEvents(), "realm_playgrounds");
    expect(event?.realm_playgrounds.map((p) => p.id)).not.toContain(id);
    expect(await server.db.realmPlayground.findUnique({ where: { id } })).toBeNull();
  });

  it("refuses an unknown one and a non-administrator", async () => {
    const { id } = await expectSuccess(add("iago", python("Kept")));
    const remove = (as: string, playground_id: number) =>
      server.as(as).DELETE("/realm/playgrounds/{playground_id}", {
        params: { path: { playground_id } },
      });
    await expectError(remove("iago", 999_999), 400, "Invalid playground");
    await expectError(remove("hamlet", id), 400, "Must be an organization administrator");
    expect(await server.db.realmPlayground.findUnique({ where: { id } })).not.toBeNull();
  });
});
