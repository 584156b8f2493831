/**
 * A push notification service ("bouncer") of the tests' own on loopback: it records every
 * request the server makes (endpoint, basic-auth credentials, JSON body), refuses wrong
 * credentials as the bouncer does (401), and fails on demand: a 5xx, a refusal with a Zulip
 * error code, an answer that never comes, or no listener at all (connection refused).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import sodium from "libsodium-wrappers";

export interface RelayRequest {
  /** The path after /api/v1/remotes/, e.g. "push/e2ee/notify". */
  endpoint: string;
  /** The basic-auth user and password sent. */
  orgId: string;
  orgKey: string;
  userAgent: string | undefined;
  body: Record<string, unknown>;
}

/** What the relay does with the next requests: answer normally, or fail. */
export type RelayMode =
  | { kind: "ok" }
  | { kind: "server-error"; status?: number }
  | { kind: "refuse"; status: number; code: string; msg: string }
  | { kind: "hang" };

export interface PushRelay {
  url: string;
  orgId: string;
  orgKey: string;
  requests: RelayRequest[];
  mode: RelayMode;
  /** Bouncer device ids the next notify answers as gone (`delete_device_ids`). */
  goneDeviceIds: number[];
  /** A URL on which nothing listens: requests to it fail with ECONNREFUSED. */
  deadUrl: string;
  close(): Promise<void>;
}

export async function startPushRelay(): Promise<PushRelay> {
  const sockets = new Set<Socket>();
  let nextDeviceId = 1000;
  const relay: PushRelay = {
    url: "",
    orgId: "0fe2a53c-9bdb-4d4b-9f2b-1a5c7d4e8f00",
    orgKey: "test-org-key-abcdefghijklmnopqrstuvwxyz",
    requests: [],
    mode: { kind: "ok" },
    goneDeviceIds: [],
    deadUrl: "",
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const json = (res: ServerResponse, status: number, body: object) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const prefix = "/api/v1/remotes/";
    const endpoint = (req.url ?? "").startsWith(prefix) ? req.url!.slice(prefix.length) : "";
    const auth = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const [orgId = "", orgKey = ""] = auth
      ? Buffer.from(auth, "base64").toString().split(/:(.*)/s)
      : [];
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      // Recorded as an empty body; the test's assertions will say so.
    }
    relay.requests.push({ endpoint, orgId, orgKey, userAgent: req.headers["user-agent"], body });
    const mode = relay.mode;
    if (mode.kind === "hang") return; // never answers
    if (orgId !== relay.orgId || orgKey !== relay.orgKey)
      return json(res, 401, {
        result: "error",
        msg: "Invalid API key",
        code: "INVALID_ZULIP_SERVER",
      });
    if (mode.kind === "server-error")
      return json(res, mode.status ?? 500, { result: "error", msg: "Internal server error" });
    if (mode.kind === "refuse")
      return json(res, mode.status, { result: "error", msg: mode.msg, code: mode.code });
    if (endpoint === "push/e2ee/register")
      return json(res, 200, { result: "success", msg: "", device_id: nextDeviceId++ });
    if (endpoint === "push/e2ee/notify") {
      const requests = Array.isArray(body.push_requests)
        ? (body.push_requests as Record<string, unknown>[])
        : [];
      const gone = relay.goneDeviceIds;
      const sent = requests.filter((r) => !gone.includes(r.device_id as number));
      return json(res, 200, {
        result: "success",
        msg: "",
        apple_successfully_sent_count: sent.filter((r) => "http_headers" in r).length,
        android_successfully_sent_count: sent.filter((r) => "fcm_priority" in r).length,
        delete_device_ids: requests
          .map((r) => r.device_id as number)
          .filter((id) => gone.includes(id)),
      });
    }
    json(res, 404, { result: "error", msg: "Not found", code: "BAD_REQUEST" });
  };
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (raw += chunk));
    req.on("end", () => handle(req, res, raw));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A port that was free a moment ago and has no listener now.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
  relay.deadUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return relay;
}

/**
 * What a phone does with a notification's `encrypted_data`: the nonce, then the secretbox, opened
 * with the device's key (call after `sodium.ready`).
 */
export function decryptPush(key: Uint8Array, encrypted: string): Record<string, unknown> {
  const bytes = Buffer.from(encrypted, "base64");
  const nonce = bytes.subarray(0, sodium.crypto_secretbox_NONCEBYTES);
  const box = bytes.subarray(sodium.crypto_secretbox_NONCEBYTES);
  const plain = sodium.crypto_secretbox_open_easy(box, nonce, key);
  return JSON.parse(Buffer.from(plain).toString()) as Record<string, unknown>;
}
