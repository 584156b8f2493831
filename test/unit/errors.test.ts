/**
 * The error model: each error serialises to Zulip's envelope with Zulip's status, and validator
 * paths are named the way Zulip names parameters.
 */
import { describe, expect, it } from "vitest";
import {
  AuthenticationFailedError,
  BadEventQueueIdError,
  IncompatibleParametersError,
  JsonableError,
  OrganizationAdministratorRequiredError,
  OrganizationOwnerRequiredError,
  RequestVariableMissingError,
  ResourceNotFoundError,
  StreamWithIdDoesNotExistError,
  UnauthorizedError,
} from "../../server/errors.ts";
import { zulipVarName } from "../../server/http/error-handler.ts";

const wire = (e: JsonableError) => ({
  status: e.httpStatus,
  body: { result: "error", msg: e.message, code: e.code, ...e.data() },
  headers: e.headers,
});

describe("errors", () => {
  it.each([
    [
      new JsonableError("Invalid message(s)"),
      400,
      { msg: "Invalid message(s)", code: "BAD_REQUEST" },
    ],
    [
      new RequestVariableMissingError("op"),
      400,
      { msg: "Missing 'op' argument", code: "REQUEST_VARIABLE_MISSING", var_name: "op" },
    ],
    [
      new IncompatibleParametersError(["stream_id", "stream"]),
      400,
      {
        msg: "Unsupported parameter combination: stream_id, stream",
        code: "BAD_REQUEST",
        parameters: "stream_id, stream",
      },
    ],
    [
      new OrganizationAdministratorRequiredError(),
      400,
      { msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" },
    ],
    [
      new OrganizationOwnerRequiredError(),
      400,
      { msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" },
    ],
    [
      new StreamWithIdDoesNotExistError(9),
      400,
      { msg: "Channel with ID '9' does not exist", code: "STREAM_DOES_NOT_EXIST", stream_id: 9 },
    ],
    [
      new BadEventQueueIdError("q1"),
      400,
      { msg: "Bad event queue ID: q1", code: "BAD_EVENT_QUEUE_ID", queue_id: "q1" },
    ],
    [
      new AuthenticationFailedError(),
      401,
      { msg: "Your username or password is incorrect", code: "AUTHENTICATION_FAILED" },
    ],
    [
      new ResourceNotFoundError("Draft does not exist"),
      404,
      { msg: "Draft does not exist", code: "BAD_REQUEST" },
    ],
  ] as const)("%s serialises to Zulip's envelope", (error, status, body) => {
    expect(wire(error)).toMatchObject({ status, body: { result: "error", ...body } });
  });

  it("adds WWW-Authenticate to 401 UNAUTHORIZED", () => {
    expect(wire(new UnauthorizedError())).toEqual({
      status: 401,
      body: {
        result: "error",
        msg: "Not logged in: API authentication or user session required",
        code: "UNAUTHORIZED",
      },
      headers: { "WWW-Authenticate": 'Basic realm="zulip"' },
    });
  });

  it("names parameters the way Zulip does", () => {
    expect(zulipVarName("/body/to")).toBe("to");
    expect(zulipVarName("/body/to/1")).toBe("to[1]");
    expect(zulipVarName("/body/draft/content")).toBe('draft["content"]');
    // Narrow terms are checked by Zulip's NarrowParameter, whose texts name the field alone.
    expect(zulipVarName("/query/narrow/0/operator")).toBe("operator");
    expect(zulipVarName("/query/narrow/0/operand/1")).toBe("operand[1]");
    expect(zulipVarName("/query/narrow/1")).toBe("narrow[1]");
  });
});
