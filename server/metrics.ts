/**
 * Prometheus metrics (prom-client), served by GET /metrics on a listener of its own
 * (METRICS_PORT, bound to METRICS_HOST, loopback by default) and only when METRICS_PORT is set:
 * requests by operation and status, their latency, open event queues, database connections,
 * and Node's process metrics (CPU, memory, event-loop lag, GC).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { PrismaClient } from "./db/index.ts";

export interface MetricsSources {
  db: PrismaClient;
  poolStats(): { total: number; idle: number; waiting: number } | null;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"operation" | "method" | "status">;
  private readonly latency: Histogram<"operation" | "method">;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: "zulip_http_requests_total",
      help: "HTTP requests answered, by operation (the spec's operationId; `unmatched` for paths outside the API), method and status.",
      labelNames: ["operation", "method", "status"],
      registers,
    });
    this.latency = new Histogram({
      name: "zulip_http_request_duration_seconds",
      help: "Time from a request's arrival to its response, by operation (GET /events includes its long-poll wait).",
      labelNames: ["operation", "method"],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    new Gauge({
      name: "zulip_event_queues_open",
      help: "Event queues registered and not yet deleted (all processes sharing the database).",
      registers,
      async collect() {
        const [row] = await sources.db.$queryRaw<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM event_queue`;
        this.set(row?.n ?? 0);
      },
    });
    new Gauge({
      name: "zulip_db_pool_connections",
      help: "Database connections of this process: total, idle and waiting (requests waiting for a connection). The embedded database has one.",
      labelNames: ["state"],
      registers,
      collect() {
        const stats = sources.poolStats() ?? { total: 1, idle: 0, waiting: 0 };
        for (const [state, value] of Object.entries(stats)) this.set({ state }, value);
      },
    });
  }

  observe(operation: string, method: string, status: number, seconds: number) {
    this.requests.inc({ operation, method, status: String(status) });
    this.latency.observe({ operation, method }, seconds);
  }

  /** The listener (main.ts listens it): GET /metrics answers the exposition text, anything else 404. */
  server(): Server {
    // answer never rejects: a failure to collect answers 500.
    return createServer((req, res) => void this.answer(req, res));
  }

  private async answer(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
      res
        .writeHead(404, { "Content-Type": "text/plain" })
        .end("Not found: the metrics are at /metrics\n");
      return;
    }
    try {
      const text = await this.registry.metrics();
      res.writeHead(200, { "Content-Type": this.registry.contentType }).end(text);
    } catch (err) {
      res
        .writeHead(500, { "Content-Type": "text/plain" })
        .end(`Cannot collect metrics: ${(err as Error).message}\n`);
    }
  }
}
