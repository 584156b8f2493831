/** Configuration from the environment; documented in docs/configuration.md. */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import express from "express";

/** The repository (server/config.ts, or dist/server/config.js once built, is two levels or one below it). */
const PROJECT_URL = new URL(
  import.meta.url.includes("/dist/server/") ? "../../" : "../",
  import.meta.url,
);

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /**
   * The web app's build (WEB_DIST_DIR, default `<repo>/web/dist`): `manifest.json` and `assets/`,
   * served at `/` and `/static/web/`; `web/public/` beside it is served at `/static/`.
   */
  webDistDir: string;
  /** `web/public/` (WEB_PUBLIC_DIR): the favicon and images, served at `/static/`. */
  webPublicDir: string;
  databaseUrl: string | undefined;
  logLevel: string;
  /** `json` (one object per line) or `pretty` (readable, for a developer's terminal). */
  logFormat: "json" | "pretty";
  /** The externally visible host of the server, used for dummy emails and URLs. */
  externalHost: string;
  /**
   * The domain of bots' and dummy addresses when an organization's host cannot make one (an IP
   * address, as on a laptop): Zulip's FAKE_EMAIL_DOMAIN.
   */
  fakeEmailDomain: string;
  /**
   * EMAIL_GATEWAY_PATTERN: the channel email addresses GET /streams/{id}/email_address answers,
   * `%s` standing for the channel's part (Zulip's setting of that name). Receiving mail there is
   * not implemented.
   */
  emailGatewayPattern: string;
  /** Validate every response against the spec (on in tests and development). */
  validateResponses: boolean;
  /** Milliseconds GET /events waits before a heartbeat. */
  eventHeartbeatMs: number;
  /** On SIGTERM/SIGINT, how long requests in flight may run before their connections are closed. */
  shutdownTimeoutMs: number;
  /** Longest time between two looks for due scheduled messages (other processes add them too). */
  scheduledDeliveryIntervalMs: number;
  /**
   * Embedded database only: PostgreSQL's fsync on, forwarded to the host files (true unless
   * PGLITE_FSYNC=off, which is for tests only). openDatabase reads it from the environment too.
   */
  pgliteFsync: boolean;
  /** Largest file POST /user_uploads accepts, in MiB (Zulip's MAX_FILE_UPLOAD_SIZE). */
  maxFileUploadSizeMib: number;
  /** Characters of keys and values one bot may keep in its storage (Zulip's USER_STATE_SIZE_LIMIT). */
  botStorageSizeLimit: number;
  /** Largest custom emoji image POST /realm/emoji/{name} accepts, in MiB (Zulip's MAX_EMOJI_FILE_SIZE_MIB). */
  maxEmojiFileSizeMib: number;
  /** MAX_AVATAR_FILE_SIZE_MIB: the largest avatar image (register's max_avatar_file_size_mib). */
  maxAvatarFileSizeMib: number;
  /** Whether organizations may have web-public channels (Zulip's WEB_PUBLIC_STREAMS_ENABLED; off by default, as in production). */
  webPublicStreamsEnabled: boolean;
  /** GET /metrics (Prometheus) on a listener of its own; off (undefined) unless METRICS_PORT is set. */
  metricsPort: number | undefined;
  /** Where the metrics listener binds: loopback unless told otherwise, so metrics are never public by default. */
  metricsHost: string;
  /**
   * How far V8 lets the JavaScript heap grow past what its last full collection kept, in percent
   * (V8's --heap-growing-percent). V8's own choice, up to 4×, kept a loaded server's garbage around
   * for hundreds of MiB; 0 leaves it to V8.
   */
  heapGrowthPercent: number;
  /**
   * Outgoing email (Zulip's, that is Django's, settings): SMTP to `emailHost` when it is set;
   * otherwise each message is written as an `.eml` file to DATA_DIR/emails.
   */
  emailHost: string | undefined;
  emailPort: number;
  emailHostUser: string;
  emailHostPassword: string;
  /** STARTTLS, required (EMAIL_USE_TLS). */
  emailUseTls: boolean;
  /** TLS from the first byte (EMAIL_USE_SSL, usually port 465). */
  emailUseSsl: boolean;
  /** The address of Zulip's FromAddress.NOREPLY ("Zulip" is its display name). */
  noreplyEmailAddress: string;
  /** Zulip's ZULIP_ADMINISTRATOR (FromAddress.SUPPORT): whom users are told to ask for help. */
  zulipAdministrator: string;
  /**
   * Zulip's DevAuthBackend: POST /dev_fetch_api_key gives any active user's API key without a
   * password. Development servers only; off by default.
   */
  devLogin: boolean;
  /** Longest time between two looks for due email (other processes queue it too). */
  emailDeliveryIntervalMs: number;
  /** Zulip's RATE_LIMITING: off, no request is limited and no X-RateLimit-* header is sent. */
  rateLimiting: boolean;
  /**
   * Zulip's RATE_LIMITING_RULES merged over its defaults (per domain, whole domains replaced):
   * each domain's rules as [seconds, most requests] pairs, shortest window first.
   */
  rateLimitingRules: RateLimitingRules;
  /**
   * Which peers may name the client in X-Forwarded-For (TRUSTED_PROXIES, Express's `trust proxy`
   * syntax): the address the per-address rate limit counts is the first untrusted one.
   */
  trustedProxies: boolean | number | string;
  /** Zulip's PASSWORD_MIN_LENGTH: the shortest password a new account may have. */
  passwordMinLength: number;
  /** Zulip's PASSWORD_MIN_GUESSES: how many guesses zxcvbn must estimate a new password takes. */
  passwordMinGuesses: number;
  /** Default validity of invitations and invitation links, in minutes (Zulip's INVITATION_LINK_VALIDITY_DAYS × 1440). */
  invitationLinkValidityMinutes: number;
  /** Invitations an organization may send in 24 hours unless its max_invites says otherwise (Zulip's INVITES_DEFAULT_REALM_DAILY_MAX). */
  invitesDefaultRealmDailyMax: number;
  /** In an organization anyone may join, how old a non-administrator's account must be to invite (Zulip's INVITES_MIN_USER_AGE_DAYS). */
  invitesMinUserAgeDays: number;
  /**
   * The organization's terms of service (Zulip's TERMS_OF_SERVICE_VERSION switches them on):
   * when set, the sign-up page links them and asks the new user to accept them.
   */
  termsOfServiceUrl: string | undefined;
  /**
   * The mobile push notification service ("bouncer") that relays E2EE notifications to FCM/APNs
   * (Zulip's PUSH_NOTIFICATION_BOUNCER_URL); unset, the server sends no mobile notifications.
   */
  pushNotificationBouncerUrl: string | undefined;
  /** This server's credentials at the bouncer, sent as HTTP basic auth (ZULIP_ORG_ID, ZULIP_ORG_KEY). */
  zulipOrgId: string;
  zulipOrgKey: string;
  /** How long a request to the bouncer may take before it counts as a network failure. */
  pushBouncerTimeoutMs: number;
  /**
   * Zulip's SEND_DIGEST_EMAILS: whether weekly digests go out at all (each organization also
   * turns them on, digest_emails_enabled, and each user, enable_digest_emails).
   */
  sendDigestEmails: boolean;
  /**
   * Zulip's PUSH_NOTIFICATION_REDACT_CONTENT: a new message's notification says "New message"
   * rather than the message's content (its sender, conversation and id are still in it).
   */
  pushNotificationRedactContent: boolean;
  /** Channels with more active subscribers than this get no typing notifications (Zulip's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS). */
  maxStreamSizeForTypingNotifications: number;
  /** The OAuth 2 video-call provider (Zoom-style; see lib/realm/video-calls.ts), used by organizations whose video_chat_provider is Zoom or Webex. */
  videoProvider: VideoProviderConfig;
  /** BigBlueButton's API base URL (ending in `/`) and shared secret (Zulip's BIG_BLUE_BUTTON_URL / _SECRET); both or neither. */
  bigBlueButtonUrl: string | undefined;
  bigBlueButtonSecret: string | undefined;
  /** Zulip's JITSI_SERVER_URL: the Jitsi Meet server of organizations that set none; undefined disables Jitsi. */
  jitsiServerUrl: string | undefined;
  /** Longest time between two runs of the retention policy and the archive's cleaning (Zulip runs archive_messages daily). */
  retentionIntervalMs: number;
  /** Days deleted messages stay in the archive before they are removed for good (Zulip's ARCHIVED_DATA_VACUUMING_DELAY_DAYS). */
  archivedDataVacuumingDelayDays: number;
  /** Weeks an upload no message links stays before its file is deleted (Zulip's delete_old_unclaimed_attachments --weeks). */
  deleteUnclaimedAttachmentsWeeks: number;
  /** S3-compatible object storage for every stored file when S3_BUCKET is set; otherwise DATA_DIR/uploads. */
  s3: S3Config | undefined;
}

/** Zulip's S3 settings (one bucket here: Zulip's S3_AUTH_UPLOADS_BUCKET and S3_AVATAR_BUCKET in one). */
export interface S3Config {
  bucket: string;
  /** S3_KEY / S3_SECRET_KEY; unset, the SDK's own credentials (environment, instance role). */
  key: string | undefined;
  secretKey: string | undefined;
  region: string;
  /** S3_ENDPOINT_URL: an S3-compatible server instead of Amazon's. */
  endpointUrl: string | undefined;
  /** S3_ADDRESSING_STYLE: "path" (bucket in the path, as most S3-compatible servers need), "virtual" or "auto". */
  addressingStyle: "auto" | "path" | "virtual";
}

/** Per domain (api_by_user, …), its rules as [seconds, most requests] pairs. */
export type RateLimitingRules = Record<RateLimitDomain, [seconds: number, max: number][]>;

/** Zulip's DEFAULT_RATE_LIMITING_RULES for the domains this server limits. */
export const DEFAULT_RATE_LIMITING_RULES = {
  // 200 requests per minute per user, 100 per address without credentials.
  api_by_user: [[60, 200]],
  api_by_ip: [[60, 100]],
  // 5 failed logins per username in 30 minutes.
  authenticate_by_username: [[1800, 5]],
} satisfies Record<string, [number, number][]>;

export type RateLimitDomain = keyof typeof DEFAULT_RATE_LIMITING_RULES;

export interface VideoProviderConfig {
  /** Shown in errors ("Zoom credentials have not been configured"). */
  name: string;
  clientId: string | undefined;
  clientSecret: string | undefined;
  authorizeUrl: string;
  tokenUrl: string;
  /** Where a POST creates a meeting with the user's bearer token. */
  meetingUrl: string;
  /** The field of the meeting's JSON holding its join URL (Zoom: join_url, Webex: webLink). */
  joinUrlField: string;
  /** The OAuth scope asked for, if the provider needs one. */
  scope: string | undefined;
}

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/** A setting the server cannot start with: names the variable and what it accepts. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly value: string,
    accepts: string,
  ) {
    super(`${variable} must be ${accepts}, not ${JSON.stringify(value)}`);
    this.name = "ConfigError";
  }
}

function integer(
  env: NodeJS.ProcessEnv,
  variable: string,
  fallback: number,
  min: number,
  max: number,
  accepts: string,
): number {
  const raw = env[variable];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw.trim());
  if (!Number.isInteger(value) || value < min || value > max)
    throw new ConfigError(variable, raw, accepts);
  return value;
}

function flag(env: NodeJS.ProcessEnv, variable: string, fallback: boolean): boolean {
  const raw = env[variable];
  if (raw === undefined || raw.trim() === "") return fallback;
  const v = raw.trim().toLowerCase();
  if (v === "true" || v === "on" || v === "1") return true;
  if (v === "false" || v === "off" || v === "0") return false;
  throw new ConfigError(variable, raw, '"true" or "false"');
}

/**
 * Reads and checks every setting; throws ConfigError for the first bad one (before anything is opened).
 * `production` gives production defaults (no response validation), as does NODE_ENV=production:
 * main.ts passes it when it runs compiled (`npm start`); `prettyLogs`: LOG_FORMAT defaults to `pretty` (stdout is a terminal).
 */
export function configFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  mode: { production?: boolean; prettyLogs?: boolean } = {},
): Config {
  const port = integer(env, "PORT", 9991, 0, 65535, "a port number (0 to 65535)");
  const host = env.HOST?.trim() || "127.0.0.1";
  const logLevel = (env.LOG_LEVEL?.trim() || "info").toLowerCase();
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError("LOG_LEVEL", env.LOG_LEVEL!, `one of ${LOG_LEVELS.join(", ")}`);
  const logFormat = (env.LOG_FORMAT?.trim() || (mode.prettyLogs ? "pretty" : "json")).toLowerCase();
  if (logFormat !== "json" && logFormat !== "pretty")
    throw new ConfigError("LOG_FORMAT", env.LOG_FORMAT!, '"json" or "pretty"');
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new ConfigError(
      "DATABASE_URL",
      databaseUrl.replace(/:[^:@/]*@/, ":***@"),
      "a postgresql:// URL",
    );
  const ms = (variable: string, fallback: number) =>
    integer(env, variable, fallback, 1, 2 ** 31 - 1, "a number of milliseconds");
  const externalHost = env.EXTERNAL_HOST?.trim() || `${host}:${port}`;
  const emailUseTls = flag(env, "EMAIL_USE_TLS", false);
  const emailUseSsl = flag(env, "EMAIL_USE_SSL", false);
  if (emailUseTls && emailUseSsl)
    // Django refuses both too: STARTTLS upgrades a plain connection, SSL never has one.
    throw new ConfigError("EMAIL_USE_SSL", env.EMAIL_USE_SSL!, '"false" when EMAIL_USE_TLS is set');
  const metricsPort = env.METRICS_PORT?.trim()
    ? integer(env, "METRICS_PORT", 0, 0, 65535, "a port number (0 to 65535)")
    : undefined;
  return {
    port,
    host,
    dataDir: resolve(env.DATA_DIR ?? "data"),
    webDistDir: env.WEB_DIST_DIR?.trim()
      ? resolve(env.WEB_DIST_DIR.trim())
      : fileURLToPath(new URL("web/dist", PROJECT_URL)),
    webPublicDir: env.WEB_PUBLIC_DIR?.trim()
      ? resolve(env.WEB_PUBLIC_DIR.trim())
      : fileURLToPath(new URL("web/public", PROJECT_URL)),
    databaseUrl,
    logLevel,
    logFormat,
    externalHost,
    fakeEmailDomain: env.FAKE_EMAIL_DOMAIN?.trim() || "localhost",
    emailGatewayPattern: emailGatewayPattern(env, externalHost),
    validateResponses: flag(
      env,
      "VALIDATE_RESPONSES",
      !mode.production && env.NODE_ENV !== "production",
    ),
    eventHeartbeatMs: ms("EVENT_HEARTBEAT_MS", 50_000),
    shutdownTimeoutMs: ms("SHUTDOWN_TIMEOUT_MS", 10_000),
    // Other processes' scheduled messages are found by looking: often on a shared PostgreSQL, and
    // rarely on the embedded database, which no other process writes (its own wake the loop).
    scheduledDeliveryIntervalMs: ms("SCHEDULED_DELIVERY_INTERVAL_MS", databaseUrl ? 1000 : 60_000),
    pgliteFsync: pgliteFsyncFromEnv(env),
    botStorageSizeLimit: integer(
      env,
      "USER_STATE_SIZE_LIMIT",
      10_000_000,
      1,
      1_000_000_000,
      "a whole number of characters",
    ),
    maxFileUploadSizeMib: integer(
      env,
      "MAX_FILE_UPLOAD_SIZE",
      25,
      1,
      1_000_000,
      "a whole number of MiB",
    ),
    maxEmojiFileSizeMib: integer(
      env,
      "MAX_EMOJI_FILE_SIZE_MIB",
      5,
      1,
      1_000_000,
      "a whole number of MiB",
    ),
    maxAvatarFileSizeMib: integer(
      env,
      "MAX_AVATAR_FILE_SIZE_MIB",
      5,
      1,
      1_000_000,
      "a whole number of MiB",
    ),
    webPublicStreamsEnabled: flag(env, "WEB_PUBLIC_STREAMS_ENABLED", false),
    metricsPort,
    metricsHost: env.METRICS_HOST?.trim() || "127.0.0.1",
    heapGrowthPercent: integer(
      env,
      "HEAP_GROWTH_PERCENT",
      50,
      0,
      300,
      "a whole number of percent from 0 to 300",
    ),
    // Django's defaults (Zulip leaves them to Django): port 25, no TLS, no login.
    emailHost: env.EMAIL_HOST?.trim() || undefined,
    emailPort: integer(env, "EMAIL_PORT", 25, 1, 65535, "a port number (1 to 65535)"),
    emailHostUser: env.EMAIL_HOST_USER ?? "",
    emailHostPassword: env.EMAIL_HOST_PASSWORD ?? "",
    emailUseTls,
    emailUseSsl,
    noreplyEmailAddress:
      env.NOREPLY_EMAIL_ADDRESS?.trim() || `noreply@${hostWithoutPort(externalHost)}`,
    zulipAdministrator:
      env.ZULIP_ADMINISTRATOR?.trim() || `zulip-admin@${hostWithoutPort(externalHost)}`,
    devLogin: flag(env, "DEV_LOGIN", false),
    // As scheduled messages: this process's own mail wakes its loop at commit.
    emailDeliveryIntervalMs: ms("EMAIL_DELIVERY_INTERVAL_MS", databaseUrl ? 1000 : 60_000),
    rateLimiting: flag(env, "RATE_LIMITING", true),
    rateLimitingRules: rateLimitingRules(env),
    trustedProxies: trustedProxies(env),
    passwordMinLength: integer(
      env,
      "PASSWORD_MIN_LENGTH",
      6,
      0,
      100,
      "a whole number from 0 to 100",
    ),
    passwordMinGuesses: integer(
      env,
      "PASSWORD_MIN_GUESSES",
      10_000,
      0,
      Number.MAX_SAFE_INTEGER,
      "a whole number of guesses",
    ),
    invitationLinkValidityMinutes: integer(
      env,
      "INVITATION_LINK_VALIDITY_MINUTES",
      14_400,
      1,
      2 ** 31 - 1,
      "a whole number of minutes",
    ),
    invitesDefaultRealmDailyMax: integer(
      env,
      "INVITES_DEFAULT_REALM_DAILY_MAX",
      100,
      0,
      2 ** 31 - 1,
      "a whole number of invitations",
    ),
    invitesMinUserAgeDays: integer(
      env,
      "INVITES_MIN_USER_AGE_DAYS",
      3,
      0,
      100_000,
      "a whole number of days",
    ),
    termsOfServiceUrl: termsOfServiceUrl(env),
    pushNotificationBouncerUrl: bouncerUrl(env),
    zulipOrgId: env.ZULIP_ORG_ID?.trim() ?? "",
    zulipOrgKey: env.ZULIP_ORG_KEY?.trim() ?? "",
    pushBouncerTimeoutMs: integer(
      env,
      "PUSH_BOUNCER_TIMEOUT_MS",
      15_000,
      1,
      600_000,
      "a whole number of milliseconds",
    ),
    pushNotificationRedactContent: flag(env, "PUSH_NOTIFICATION_REDACT_CONTENT", false),
    sendDigestEmails: flag(env, "SEND_DIGEST_EMAILS", true),
    maxStreamSizeForTypingNotifications: integer(
      env,
      "MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS",
      100,
      0,
      2 ** 31 - 1,
      "a whole number of subscribers",
    ),
    videoProvider: {
      name: env.VIDEO_PROVIDER_NAME?.trim() || "Zoom",
      clientId: env.VIDEO_PROVIDER_CLIENT_ID?.trim() || undefined,
      clientSecret: env.VIDEO_PROVIDER_CLIENT_SECRET?.trim() || undefined,
      authorizeUrl: httpUrl(
        env,
        "VIDEO_PROVIDER_AUTHORIZE_URL",
        "https://zoom.us/oauth/authorize",
      )!,
      tokenUrl: httpUrl(env, "VIDEO_PROVIDER_TOKEN_URL", "https://zoom.us/oauth/token")!,
      meetingUrl: httpUrl(
        env,
        "VIDEO_PROVIDER_MEETING_URL",
        "https://api.zoom.us/v2/users/me/meetings",
      )!,
      joinUrlField: env.VIDEO_PROVIDER_JOIN_URL_FIELD?.trim() || "join_url",
      scope: env.VIDEO_PROVIDER_SCOPE?.trim() || undefined,
    },
    ...bigBlueButton(env),
    jitsiServerUrl: httpUrl(env, "JITSI_SERVER_URL", "https://meet.jit.si", true),
    retentionIntervalMs: ms("RETENTION_INTERVAL_MS", 3_600_000),
    archivedDataVacuumingDelayDays: integer(
      env,
      "ARCHIVED_DATA_VACUUMING_DELAY_DAYS",
      30,
      0,
      100_000,
      "a whole number of days",
    ),
    deleteUnclaimedAttachmentsWeeks: integer(
      env,
      "DELETE_UNCLAIMED_ATTACHMENTS_WEEKS",
      5,
      0,
      10_000,
      "a whole number of weeks",
    ),
    s3: s3Config(env),
  };
}

/** S3_BUCKET and its settings, checked; undefined without S3_BUCKET. */
function s3Config(env: NodeJS.ProcessEnv): S3Config | undefined {
  const bucket = env.S3_BUCKET?.trim();
  if (!bucket) return undefined;
  const key = env.S3_KEY?.trim() || undefined;
  const secretKey = env.S3_SECRET_KEY?.trim() || undefined;
  if ((key === undefined) !== (secretKey === undefined))
    throw new ConfigError(
      key ? "S3_SECRET_KEY" : "S3_KEY",
      "",
      "set together with " + (key ? "S3_KEY" : "S3_SECRET_KEY"),
    );
  const addressingStyle = (env.S3_ADDRESSING_STYLE?.trim() || "auto").toLowerCase();
  if (addressingStyle !== "auto" && addressingStyle !== "path" && addressingStyle !== "virtual")
    throw new ConfigError(
      "S3_ADDRESSING_STYLE",
      env.S3_ADDRESSING_STYLE!,
      '"auto", "path" or "virtual"',
    );
  return {
    bucket,
    key,
    secretKey,
    region: env.S3_REGION?.trim() || "us-east-1",
    endpointUrl: env.S3_ENDPOINT_URL?.trim() ? httpUrl(env, "S3_ENDPOINT_URL", "") : undefined,
    addressingStyle,
  };
}

/**
 * RATE_LIMITING_RULES, as Zulip writes it but in JSON: `{"api_by_user": [[1, 5], [60, 200]]}`.
 * A domain given replaces its default; an empty list leaves the domain unlimited.
 */
function rateLimitingRules(env: NodeJS.ProcessEnv): RateLimitingRules {
  const raw = env.RATE_LIMITING_RULES?.trim();
  const rules: RateLimitingRules = structuredClone(DEFAULT_RATE_LIMITING_RULES);
  if (!raw) return rules;
  const accepts = `a JSON object mapping ${Object.keys(rules).join(", ")} to lists of [seconds, requests] pairs of positive whole numbers`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError("RATE_LIMITING_RULES", raw, accepts);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
    throw new ConfigError("RATE_LIMITING_RULES", raw, accepts);
  const positive = (n: unknown) => Number.isSafeInteger(n) && (n as number) > 0;
  for (const [domain, pairs] of Object.entries(parsed)) {
    if (
      !Object.hasOwn(rules, domain) ||
      !Array.isArray(pairs) ||
      !pairs.every((p) => Array.isArray(p) && p.length === 2 && p.every(positive))
    )
      throw new ConfigError("RATE_LIMITING_RULES", raw, accepts);
    rules[domain as RateLimitDomain] = (pairs as [number, number][])
      .map(([seconds, max]) => [seconds, max] as [number, number])
      .sort((a, b) => a[0] - b[0]);
  }
  return rules;
}

/**
 * TRUSTED_PROXIES in Express's `trust proxy` syntax: `loopback` (default: nginx on the same host),
 * a comma-separated list of addresses, subnets or the names loopback, linklocal and uniquelocal,
 * a number of hops, or true/false.
 */
function trustedProxies(env: NodeJS.ProcessEnv): boolean | number | string {
  const raw = env.TRUSTED_PROXIES?.trim() || "loopback";
  const value = /^(true|false)$/i.test(raw)
    ? raw.toLowerCase() === "true"
    : /^\d+$/.test(raw)
      ? Number(raw)
      : raw;
  try {
    // Express compiles the setting as it is set, refusing what is not an address or subnet.
    express().set("trust proxy", value);
  } catch {
    throw new ConfigError(
      "TRUSTED_PROXIES",
      raw,
      "addresses or subnets (or loopback, linklocal, uniquelocal), comma-separated; a number of hops; or true/false",
    );
  }
  return value;
}

/** An http(s) URL setting; with `canUnset`, an empty value (set but blank) turns the feature off. */
function httpUrl(
  env: NodeJS.ProcessEnv,
  variable: string,
  fallback: string,
  canUnset = false,
): string | undefined {
  const raw = env[variable];
  if (raw === undefined) return fallback;
  if (raw.trim() === "") return canUnset ? undefined : fallback;
  if (!/^https?:\/\/[^\s]+$/i.test(raw.trim()))
    throw new ConfigError(variable, raw, "an http(s) URL");
  return raw.trim();
}

/** BIG_BLUE_BUTTON_URL (its API base, given a trailing `/` as Zulip expects) with BIG_BLUE_BUTTON_SECRET. */
function bigBlueButton(env: NodeJS.ProcessEnv) {
  const secret = env.BIG_BLUE_BUTTON_SECRET?.trim() || undefined;
  const url = env.BIG_BLUE_BUTTON_URL?.trim() ? httpUrl(env, "BIG_BLUE_BUTTON_URL", "") : undefined;
  if ((url === undefined) !== (secret === undefined))
    throw new ConfigError(
      url ? "BIG_BLUE_BUTTON_SECRET" : "BIG_BLUE_BUTTON_URL",
      "",
      "set together with " + (url ? "BIG_BLUE_BUTTON_URL" : "BIG_BLUE_BUTTON_SECRET"),
    );
  return {
    bigBlueButtonUrl: url && (url.endsWith("/") ? url : url + "/"),
    bigBlueButtonSecret: secret,
  };
}

/** Zulip's deport: `chat.example.com:9991` → `chat.example.com`, `[::1]:9991` → `[::1]`. */
/** EMAIL_GATEWAY_PATTERN: one `%s`; by default `%s@` the external host without its port. */
function emailGatewayPattern(env: NodeJS.ProcessEnv, externalHost: string): string {
  const raw = env.EMAIL_GATEWAY_PATTERN?.trim();
  if (!raw) return `%s@${hostWithoutPort(externalHost)}`;
  if (raw.split("%s").length !== 2)
    throw new ConfigError("EMAIL_GATEWAY_PATTERN", raw, "a pattern with exactly one %s");
  return raw;
}

function hostWithoutPort(host: string): string {
  return host.replace(/:\d+$/, "");
}

/** TERMS_OF_SERVICE_URL: an http(s) URL or a path on this server, or unset (no terms). */
function termsOfServiceUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.TERMS_OF_SERVICE_URL?.trim();
  if (!raw) return undefined;
  if (!/^(https?:\/\/[^\s]+|\/[^\s]*)$/i.test(raw))
    throw new ConfigError("TERMS_OF_SERVICE_URL", raw, "an http(s) URL or a path starting with /");
  return raw;
}

/** PUSH_NOTIFICATION_BOUNCER_URL: an http(s) URL (its trailing slashes dropped), or unset. */
function bouncerUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.PUSH_NOTIFICATION_BOUNCER_URL?.trim();
  if (!raw) return undefined;
  if (!/^https?:\/\/[^\s]+$/i.test(raw))
    throw new ConfigError("PUSH_NOTIFICATION_BOUNCER_URL", raw, "an http(s) URL");
  return raw.replace(/\/+$/, "");
}

/** PGLITE_FSYNC: `on` (default) or `off` (tests only: a power loss can then lose commits or corrupt the data directory). */
export function pgliteFsyncFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.PGLITE_FSYNC ?? "on").trim().toLowerCase();
  if (v === "on" || v === "true" || v === "1" || v === "") return true;
  if (v === "off" || v === "false" || v === "0") return false;
  throw new ConfigError("PGLITE_FSYNC", env.PGLITE_FSYNC!, '"on" or "off"');
}
