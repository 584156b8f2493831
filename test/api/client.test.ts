/** The typed client as an importer uses it: unwrap() returns data or throws ZulipApiError. */
import { describe, expect, it } from "vitest";
import { createZulipClient, encodeParam, unwrap, ZulipApiError } from "../../client/index.ts";
import { useTestServer } from "../helpers/server.ts";
import { specCheckMiddleware } from "../helpers/spec-check.ts";

const server = useTestServer();

describe("client/", () => {
  it("accepts the server address with or without /api/v1 and unwraps success bodies", async () => {
    const hamlet = server.creds.users.hamlet!;
    for (const baseUrl of [server.baseUrl, `${server.baseUrl}/api/v1/`]) {
      const zulip = createZulipClient({ baseUrl, email: hamlet.email, apiKey: hamlet.api_key, middleware: [specCheckMiddleware] });
      const me = await unwrap(zulip.GET("/users/me"));
      expect(me.user_id).toBe(hamlet.user_id);
    }
  });

  it("throws ZulipApiError with the status, code and extra fields of an error", async () => {
    const zulip = createZulipClient({ baseUrl: server.baseUrl, email: "hamlet@zulip.com", apiKey: server.creds.users.hamlet!.api_key, middleware: [specCheckMiddleware] });
    const error = await unwrap(zulip.POST("/messages", { body: { type: "channel", to: 4242, topic: "t", content: "c" } })).catch((e) => e);
    expect(error).toBeInstanceOf(ZulipApiError);
    expect(error).toMatchObject({ status: 400, code: "STREAM_DOES_NOT_EXIST", message: "Channel with ID '4242' does not exist", body: { stream_id: 4242 } });
  });

  it("encodes parameters the Zulip way", () => {
    expect([encodeParam("Verona"), encodeParam(7), encodeParam(true), encodeParam([1, 2]), encodeParam({ new: 5 })]).toEqual(["Verona", "7", "true", "[1,2]", '{"new":5}']);
  });
});
