/**
 * nginx in front of server processes, run from deploy/nginx.conf itself: its upstream's `server`
 * lines become one per given port, its `listen` lines one loopback port, and it is included in a
 * minimal main configuration (as Debian's /etc/nginx/nginx.conf includes a site) whose paths all
 * lie in a temporary prefix, with an access log naming the process(es) each request went to.
 * Used by test/cli/nginx.test.ts and `npm run bench`; no vitest here.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const DEPLOY_CONF = fileURLToPath(new URL("../../deploy/nginx.conf", import.meta.url));

/** The nginx binary (NGINX_PATH, else the one on PATH or Debian's), or undefined when missing. */
export function nginxBinary(): string | undefined {
  if (process.env.NGINX_PATH) return process.env.NGINX_PATH;
  const onPath = spawnSync("sh", ["-c", "command -v nginx"], { encoding: "utf8" }).stdout.trim();
  if (onPath) return onPath;
  return existsSync("/usr/sbin/nginx") ? "/usr/sbin/nginx" : undefined;
}

/** deploy/nginx.conf with the given upstream ports and listening on 127.0.0.1:listenPort. */
export function siteConfig(upstreamPorts: number[], listenPort: number): string {
  const lines = readFileSync(DEPLOY_CONF, "utf8").split("\n");
  const out: string[] = [];
  let upstreamDone = false;
  let listenDone = false;
  for (const line of lines) {
    const upstream = /^(\s*)server\s+127\.0\.0\.1:\d+(.*)$/.exec(line);
    if (upstream) {
      if (!upstreamDone)
        for (const port of upstreamPorts)
          out.push(`${upstream[1]}server 127.0.0.1:${port}${upstream[2]}`);
      upstreamDone = true;
      continue;
    }
    const listen = /^(\s*)listen\s/.exec(line);
    if (listen) {
      if (!listenDone) out.push(`${listen[1]}listen 127.0.0.1:${listenPort};`);
      listenDone = true;
      continue;
    }
    out.push(line);
  }
  if (!upstreamDone || !listenDone)
    throw new Error(`${DEPLOY_CONF}: no upstream "server 127.0.0.1:PORT" or no "listen" line`);
  return out.join("\n");
}

export interface AccessLogLine {
  method: string;
  uri: string;
  /** The query's queue_id, or "-". */
  queueId: string;
  status: number;
  /** The processes nginx tried, in order ("127.0.0.1:PORT"), the last one answering. */
  upstreams: string[];
}

export interface Nginx {
  port: number;
  baseUrl: string;
  dir: string;
  child: ChildProcess;
  /** The access log, once the lines of the requests answered so far are written (nginx writes one just after its answer). */
  accessLog(): Promise<AccessLogLine[]>;
  errorLog(): string;
  stop(): Promise<void>;
}

/** Starts nginx (not as a daemon) in a temporary prefix; resolves once it answers. */
export async function startNginx(upstreamPorts: number[], listenPort: number): Promise<Nginx> {
  const binary = nginxBinary();
  if (!binary) throw new Error("nginx is not installed (apt-get install -y nginx)");
  const dir = mkdtempSync(join(os.tmpdir(), "chat-nginx-"));
  // nginx's workers run as an unprivileged user when the master is root: they must reach the prefix.
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, "site.conf"), siteConfig(upstreamPorts, listenPort));
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `  ${t}_temp_path ${join(dir, t)};`)
    .join("\n");
  writeFileSync(
    join(dir, "nginx.conf"),
    `worker_processes 1;
events { worker_connections 1024; }
http {
  log_format upstreams '$request_method $uri $arg_queue_id $status "$upstream_addr"';
  access_log ${join(dir, "access.log")} upstreams;
${temp}
  include ${join(dir, "site.conf")};
}
`,
  );
  const child = spawn(
    binary,
    [
      "-p",
      dir,
      "-c",
      join(dir, "nginx.conf"),
      "-e",
      join(dir, "error.log"),
      "-g",
      `daemon off; pid ${join(dir, "nginx.pid")};`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const read = (file: string) =>
    existsSync(join(dir, file)) ? readFileSync(join(dir, file), "utf8") : "";
  const baseUrl = `http://127.0.0.1:${listenPort}`;
  const nginx: Nginx = {
    port: listenPort,
    baseUrl,
    dir,
    child,
    accessLog: async () =>
      (await new Promise((r) => setTimeout(r, 200)), read("access.log"))
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [, method, uri, queueId, status, upstreams] =
            /^(\S+) (\S+) (\S*) (\d+) "(.*)"$/.exec(line) ?? [];
          return {
            method: method!,
            uri: uri!,
            queueId: queueId && queueId !== "-" ? decodeURIComponent(queueId) : "-",
            status: Number(status),
            upstreams: (upstreams ?? "").split(/,\s*/).filter((u) => u && u !== "-"),
          };
        }),
    errorLog: () => read("error.log") + stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM"); // fast shutdown; the workers follow their master
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = nginx.errorLog();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx exited with ${child.exitCode}:\n${log}`);
    }
    // Any answer (even 502 while no process is up yet) means nginx listens.
    const up = await fetch(`${baseUrl}/health`).then(
      () => true,
      () => false,
    );
    if (up) return nginx;
    if (Date.now() > deadline) {
      const log = nginx.errorLog();
      await nginx.stop();
      throw new Error(`nginx did not listen within 10 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
