/**
 * Requests to the mobile push notification service ("bouncer"), as Zulip's send_to_push_bouncer
 * (zerver/lib/remote_server.py) makes them: POST <PUSH_NOTIFICATION_BOUNCER_URL>/api/v1/remotes/
 * <endpoint>, HTTP basic auth with ZULIP_ORG_ID:ZULIP_ORG_KEY, a JSON body. Never called inside a
 * database transaction: the bouncer may be slow or away, and no row lock may wait for it.
 */
import type { Config } from "../../config.ts";
import { JsonableError } from "../../errors.ts";
import { ZULIP_VERSION } from "../../version.ts";

/** The bouncer could not be reached, or did not answer in time (PushNotificationBouncerRetryLaterError). */
export class BouncerNetworkError extends Error {}
/** The bouncer answered 5xx (PushNotificationBouncerServerError). */
export class BouncerServerError extends Error {}
/** The bouncer refused the request with a 4xx: its `code` and `msg` (or an unexpected status). */
export class BouncerRefusedError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    msg: string,
  ) {
    super(msg);
  }
}

type BouncerConfig = Pick<
  Config,
  "pushNotificationBouncerUrl" | "zulipOrgId" | "zulipOrgKey" | "pushBouncerTimeoutMs"
>;

/** Whether the server sends mobile notifications through a bouncer (uses_notification_bouncer). */
export const usesNotificationBouncer = (config: BouncerConfig) =>
  config.pushNotificationBouncerUrl !== undefined;

/** "Server is not configured to use push notification service." (PushServiceNotConfiguredError). */
export function pushServiceNotConfigured(): JsonableError {
  return new JsonableError("Server is not configured to use push notification service.", {
    code: "PUSH_SERVICE_NOT_CONFIGURED",
  });
}

export async function sendToBouncer(
  config: BouncerConfig,
  endpoint: string,
  body: object,
): Promise<Record<string, unknown>> {
  const url = `${config.pushNotificationBouncerUrl}/api/v1/remotes/${endpoint}`;
  const auth = Buffer.from(`${config.zulipOrgId}:${config.zulipOrgKey}`).toString("base64");
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Basic ${auth}`,
        "content-type": "application/json",
        "user-agent": `ZulipServer/${ZULIP_VERSION}`,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(config.pushBouncerTimeoutMs),
    });
    text = await response.text();
  } catch (error) {
    throw new BouncerNetworkError(`Network error connecting to push bouncer: ${String(error)}`);
  }
  if (response.status >= 500) throw new BouncerServerError(`Bouncer answered ${response.status}`);
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object") parsed = value as Record<string, unknown>;
  } catch {
    // A non-JSON answer is handled by its status below.
  }
  if (response.status !== 200) {
    const code = typeof parsed.code === "string" ? parsed.code : undefined;
    const msg = typeof parsed.msg === "string" ? parsed.msg : `status ${response.status}`;
    throw new BouncerRefusedError(response.status, code, msg);
  }
  return parsed;
}

/**
 * The API errors of a request the user is waiting on (send_e2ee_test_push_notification): the
 * bouncer away or failing is a 502; anything it refuses (credentials, plan, an organization it
 * does not know) needs the server's administrator: 403 ADMIN_ACTION_REQUIRED.
 */
export function bouncerApiError(error: unknown): unknown {
  if (error instanceof BouncerNetworkError)
    return new JsonableError("Network error while connecting to Zulip push notification service.", {
      code: "FAILED_TO_CONNECT_BOUNCER",
      httpStatus: 502,
    });
  if (error instanceof BouncerServerError)
    return new JsonableError(
      "Internal server error on Zulip push notification service, retry later.",
      { code: "INTERNAL_SERVER_ERROR_ON_BOUNCER", httpStatus: 502 },
    );
  if (error instanceof BouncerRefusedError) return adminActionRequired();
  return error;
}

/** PushNotificationAdminActionRequiredError. */
export function adminActionRequired(): JsonableError {
  return new JsonableError(
    "Push notification configuration issue on server, contact the server administrator or retry later.",
    { code: "ADMIN_ACTION_REQUIRED", httpStatus: 403 },
  );
}
