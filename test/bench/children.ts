/**
 * Child processes and clean-up for `npm run bench`: servers run as children spawned with node
 * directly (no npm wrapper), so their pid is the server's and /proc/<pid>/status measures the
 * server alone. Every child and every registered clean-up is undone on exit, error or Ctrl-C.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface Child {
  name: string;
  pid: number;
  base: string;
  proc: ChildProcess;
  startedAt: number;
  /** The last lines the child printed (stdout and stderr), for error messages. */
  output(): string;
  exited: Promise<number | null>;
}

const children = new Set<ChildProcess>();
const cleanups: (() => Promise<void> | void)[] = [];

/** Registers a clean-up step; they run in reverse order in cleanUp(). */
export function onCleanUp(fn: () => Promise<void> | void) {
  cleanups.push(fn);
}

let cleaning: Promise<void> | undefined;
/** Kills the children still running, then runs the registered clean-ups (once). */
export function cleanUp(): Promise<void> {
  return (cleaning ??= (async () => {
    for (const c of children) c.kill("SIGKILL");
    await Promise.all(
      [...children].map(
        (c) =>
          new Promise((r) =>
            c.exitCode !== null || c.signalCode !== null ? r(null) : c.once("exit", r),
          ),
      ),
    );
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (e) {
        console.error(`clean-up failed: ${(e as Error).message}`);
      }
    }
  })());
}

process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});
let signalled = false;
/** Whether a signal interrupted the run (the clean-up then exits with 130). */
export const interrupted = () => signalled;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
  process.on(signal, () => {
    signalled = true;
    console.error(`\n${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * Bundles the two yardsticks (raw-server.ts, minimal-server.ts) into dist/bench/ as our server is
 * bundled (server/tools/build.mjs: esbuild, packages left to node_modules), so that all three run
 * as plain JavaScript.
 */
export async function compileBenchServers(): Promise<void> {
  const { build } = await import("esbuild");
  await build({
    absWorkingDir: ROOT,
    entryPoints: ["test/bench/raw-server.ts", "test/bench/minimal-server.ts"],
    outdir: "dist/bench",
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20.19",
    logLevel: "warning",
  });
}

/** Spawns `node <script>` (compiled) or `node --import tsx <script>` in the repository with env added to ours. */
export async function spawnServer(
  name: string,
  script: string,
  env: Record<string, string | undefined>,
): Promise<Child> {
  const port = await freePort();
  const fullEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...env,
    PORT: String(port),
    HOST: "127.0.0.1",
  };
  for (const [k, v] of Object.entries(fullEnv)) if (v === undefined) delete fullEnv[k];
  const startedAt = performance.now();
  const args = script.endsWith(".ts") ? ["--import", "tsx", script] : [script];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: fullEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(proc);
  let tail = "";
  const keep = (chunk: Buffer) => (tail = (tail + chunk.toString("utf8")).slice(-4000));
  proc.stdout.on("data", keep);
  proc.stderr.on("data", keep);
  const exited = new Promise<number | null>((resolve) =>
    proc.once("exit", (code) => {
      children.delete(proc);
      resolve(code);
    }),
  );
  return {
    name,
    pid: proc.pid!,
    base: `http://127.0.0.1:${port}/api/v1`,
    proc,
    startedAt,
    output: () => tail,
    exited,
  };
}

/** Polls GET /server_settings until it answers 200; returns the ms since the spawn. */
export async function waitReady(child: Child, timeoutMs = 90_000): Promise<number> {
  let dead = false;
  void child.exited.then(() => (dead = true));
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (dead) throw new Error(`${child.name} exited before it was ready:\n${child.output()}`);
    try {
      const res = await fetch(`${child.base}/server_settings`, {
        signal: AbortSignal.timeout(2000),
      });
      await res.arrayBuffer();
      if (res.ok) return performance.now() - child.startedAt;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${child.name} was not ready after ${timeoutMs / 1000} s:\n${child.output()}`);
}

export async function startServer(
  name: string,
  script: string,
  env: Record<string, string | undefined>,
): Promise<{ child: Child; readyMs: number }> {
  const child = await spawnServer(name, script, env);
  try {
    return { child, readyMs: await waitReady(child) };
  } catch (e) {
    child.proc.kill("SIGKILL");
    throw e;
  }
}

/** SIGTERM (our server then releases the data directory's lock), SIGKILL after timeoutMs. */
export async function stopServer(child: Child, timeoutMs = 20_000): Promise<number | null> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return child.proc.exitCode;
  child.proc.kill("SIGTERM");
  const timer = setTimeout(() => child.proc.kill("SIGKILL"), timeoutMs);
  const code = await child.exited;
  clearTimeout(timer);
  return code;
}

/** VmRSS (now) and VmHWM (peak) of a process, in MiB, from /proc/<pid>/status (Linux). */
export function memoryOf(pid: number): { rss: number; peak: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
  } catch {
    return undefined;
  }
}

/** Runs a command to completion (npm run manage …); throws with its output if it fails. */
export async function run(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<string> {
  const fullEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(fullEnv)) if (v === undefined) delete fullEnv[k];
  const proc = spawn(command, args, { cwd: ROOT, env: fullEnv, stdio: ["ignore", "pipe", "pipe"] });
  children.add(proc);
  let out = "";
  proc.stdout.on("data", (c: Buffer) => (out += c.toString()));
  proc.stderr.on("data", (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((r) => proc.once("exit", r));
  children.delete(proc);
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} failed (exit ${code}):\n${out}`);
  return out;
}
