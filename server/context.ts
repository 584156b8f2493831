/**
 * What a handler and an action get: the database, the event bus, the logger, the clock and
 * configuration; for authenticated operations also the organization and the acting user.
 */
import type { Logger } from "pino";
import type { PrismaClient, Realm, UserProfile } from "./db/index.ts";
import type { EventBus } from "./events/index.ts";
import type { Config } from "./config.ts";
import type { Metrics } from "./metrics.ts";
import type { RateLimitStatus } from "./lib/auth/rate-limit.ts";

export interface AppDeps {
  db: PrismaClient;
  events: EventBus;
  log: Logger;
  config: Config;
  /** The clock; tests may replace it. */
  now: () => Date;
  /** Prometheus metrics, when METRICS_PORT is set (see metrics.ts). */
  metrics?: Metrics;
  /** Which database `db` is: the embedded one belongs to this process alone. */
  databaseKind?: "pglite" | "postgres";
  /** Told of each operation answered, with the SQL statements it ran (tests assert budgets on it). */
  observe?: (info: RequestInfo) => void;
}

export interface RequestInfo {
  operationId: string;
  status: number;
  /** SQL statements the request ran: authentication and handler, BEGIN and COMMIT included. */
  statements: number;
}

export interface PublicContext extends AppDeps {
  /** The organization the request's host names (see lib/realm/realm.ts resolveRealm). */
  host: string;
  /** The request's User-Agent, from which Zulip names the sending client. */
  userAgent?: string;
  /** Headers the response gets, whether the handler returns or throws (X-RateLimit-*). */
  responseHeaders?: Record<string, string>;
  /** The API rate limit's status for this request (http/rate-limit.ts), when limits are on. */
  rateLimit?: RateLimitStatus;
}

export interface RequestContext extends PublicContext {
  realm: Realm;
  user: UserProfile;
}
