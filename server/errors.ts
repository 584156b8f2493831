/**
 * Zulip's error model: every refusal is a JsonableError carrying the user-facing `msg`, a
 * machine-readable `code`, an HTTP status and optional extra fields. Only
 * http/error-handler.ts turns one into a response. Texts and statuses copy
 * zerver/lib/exceptions.py (see shared/reference/zulip-behaviour.md §0).
 */
export class JsonableError extends Error {
  code = "BAD_REQUEST";
  httpStatus = 400;
  headers: Record<string, string> = {};
  constructor(
    msg: string,
    options?: { code?: string; httpStatus?: number; data?: Record<string, unknown> },
  ) {
    super(msg);
    if (options?.code) this.code = options.code;
    if (options?.httpStatus) this.httpStatus = options.httpStatus;
    if (options?.data) this.extra = options.data;
  }
  extra: Record<string, unknown> = {};
  data(): Record<string, unknown> {
    return this.extra;
  }
}

/** A required parameter was not sent (zerver/lib/request.py RequestVariableMissingError). */
export class RequestVariableMissingError extends JsonableError {
  constructor(varName: string) {
    super(`Missing '${varName}' argument`, {
      code: "REQUEST_VARIABLE_MISSING",
      data: { var_name: varName },
    });
  }
}

/**
 * Two parameters that exclude each other were both sent (IncompatibleParametersError). Zulip's
 * class sets no code, so it answers BAD_REQUEST; REQUEST_CONFUSING_VAR is only for
 * "Can't decide between 'x' and 'y' arguments" (RequestConfusingParamsError).
 */
export class IncompatibleParametersError extends JsonableError {
  constructor(names: string[]) {
    const parameters = names.join(", ");
    super(`Unsupported parameter combination: ${parameters}`, { data: { parameters } });
  }
}

/** 401 for API authentication failures; Zulip always adds `WWW-Authenticate: Basic realm="zulip"`. */
export class UnauthorizedError extends JsonableError {
  constructor(
    msg = "Not logged in: API authentication or user session required",
    code = "UNAUTHORIZED",
  ) {
    super(msg, { code, httpStatus: 401 });
    this.headers["WWW-Authenticate"] = 'Basic realm="zulip"';
  }
}

/**
 * 401 on `/json` without a valid session (Zulip's rest_dispatch: the web app's paths name the
 * session, not HTTP Basic, in WWW-Authenticate).
 */
export class SessionRequiredError extends UnauthorizedError {
  constructor(msg?: string) {
    super(msg);
    this.headers["WWW-Authenticate"] = 'Session realm="zulip"';
  }
}

/**
 * 403 CSRF_FAILED: a session request other than GET/HEAD without the session's token in
 * X-CSRFToken (Django's CsrfViewMiddleware, answered by zerver/middleware.py csrf_failure).
 */
export class CsrfFailedError extends JsonableError {
  static readonly MISSING = "CSRF error: CSRF token missing.";
  static readonly INCORRECT = "CSRF error: CSRF token from the 'X-Csrftoken' HTTP header incorrect.";
  constructor(msg: string) {
    super(msg, { code: "CSRF_FAILED", httpStatus: 403 });
  }
}

/** 401 failures of POST /fetch_api_key (AuthenticationFailedError and subclasses). */
export class AuthenticationFailedError extends JsonableError {
  constructor(msg = "Your username or password is incorrect", code = "AUTHENTICATION_FAILED") {
    super(msg, { code, httpStatus: 401 });
  }
}

/** require_realm_admin / require_realm_owner (UNAUTHORIZED_PRINCIPAL, still HTTP 400). */
export class OrganizationAdministratorRequiredError extends JsonableError {
  constructor() {
    super("Must be an organization administrator", { code: "UNAUTHORIZED_PRINCIPAL" });
  }
}
export class OrganizationOwnerRequiredError extends JsonableError {
  constructor() {
    super("Must be an organization owner", { code: "UNAUTHORIZED_PRINCIPAL" });
  }
}

/** ResourceNotFoundError: the few not-found cases Zulip answers with 404. */
export class ResourceNotFoundError extends JsonableError {
  constructor(msg: string) {
    super(msg, { httpStatus: 404 });
  }
}

export class StreamWithIdDoesNotExistError extends JsonableError {
  constructor(streamId: number) {
    super(`Channel with ID '${streamId}' does not exist`, {
      code: "STREAM_DOES_NOT_EXIST",
      data: { stream_id: streamId },
    });
  }
}

export class BadEventQueueIdError extends JsonableError {
  constructor(queueId: string) {
    super(`Bad event queue ID: ${queueId}`, {
      code: "BAD_EVENT_QUEUE_ID",
      data: { queue_id: queueId },
    });
  }
}

/**
 * 429 past a rate limit (zerver/lib/exceptions.py RateLimitedError): `retry-after` in the body
 * and `Retry-After` in the headers, both the seconds until the next attempt may succeed.
 */
export class RateLimitedError extends JsonableError {
  constructor(secsToFreedom: number) {
    super(
      "API usage exceeded rate limit; see https://zulip.com/api/http-headers#rate-limiting-response-headers",
      { code: "RATE_LIMIT_HIT", httpStatus: 429, data: { "retry-after": secsToFreedom } },
    );
    this.headers["Retry-After"] = String(secsToFreedom);
  }
}
