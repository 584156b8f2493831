/** Assertions on Zulip responses from the typed client. */
import { expect } from "vitest";

type Result = { data?: unknown; error?: unknown; response: Response };

/** Asserts an error envelope with Zulip's status, msg and (optionally) code and extra fields. */
export async function expectError(
  request: Promise<Result>,
  status: number,
  msg: string,
  extra: Record<string, unknown> = {},
) {
  const { data, error, response } = await request;
  expect(data, `expected an error, got ${JSON.stringify(data)}`).toBeUndefined();
  expect({ status: response.status, ...(error as object) }).toMatchObject({
    status,
    result: "error",
    msg,
    ...extra,
  });
  return { error: error as Record<string, unknown>, response };
}

/** Asserts a success envelope and returns its body. */
export async function expectSuccess<T>(
  request: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await request;
  expect(
    error,
    `expected success, got ${response.status} ${JSON.stringify(error)}`,
  ).toBeUndefined();
  expect(response.status).toBe(200);
  expect(data).toMatchObject({ result: "success", msg: "" });
  return data!;
}
