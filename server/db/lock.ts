// One process owns an embedded (PGlite) data directory at a time: two PostgreSQL instances
// writing the same files corrupt them. The lock has to disappear when its owner dies, however it
// dies. A plain pid file does not: after kill -9 it names a zombie for a while (kill(pid, 0) still
// succeeds), and later perhaps an unrelated process that was given the same pid. So:
//
// - Linux: the lock is a listening Unix socket in the abstract namespace, named after the data
//   directory's device and inode (the same directory reached by another path, e.g. a bind mount,
//   gets the same name). bind() is atomic, and the kernel frees the name when the socket's file
//   descriptor is closed, which exit does, kill -9 included, before the dead process is reaped.
//   The holder answers a connection with its pid, for the error message. Limit: the abstract
//   namespace belongs to a network namespace, so containers with their own networks that mount
//   the same volume do not see each other's lock.
// - Elsewhere (macOS, Windows), or where that socket cannot be created: a pid file `<dir>.lock`
//   holding the pid and the process's start time (from ps). It is honoured only while that pid
//   is alive, is not a zombie, and started at that time; without ps, while the pid is alive.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
import { resolve } from "node:path";

export type LockMethod = "socket" | "pidfile";

/** Releases the lock (idempotent). */
export type Unlock = () => Promise<void>;

export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number | undefined,
  ) {
    const by = pid === process.pid ? "this process" : pid ? `process ${pid}` : "another process";
    super(
      `The data directory ${dir} is in use by ${by}: stop it first (one process owns an embedded database at a time).`,
    );
    this.name = "DataDirInUseError";
  }
}

/**
 * Takes the lock of an existing directory, or throws DataDirInUseError. `method` is for tests;
 * by default the socket on Linux, the pid file elsewhere.
 */
export async function lockDataDir(
  dir: string,
  method: LockMethod = process.platform === "linux" ? "socket" : "pidfile",
): Promise<Unlock> {
  if (method === "socket") {
    const unlock = await socketLock(dir);
    if (unlock) {
      // A pid file left by an older version of this server means nothing now.
      const legacy = lockFileOf(dir);
      if (readOrUndefined(legacy)?.trim().match(/^\d+$/)) rmSync(legacy, { force: true });
      return unlock;
    }
  }
  return pidFileLock(dir);
}

// ---------------------------------------------------------------------------------------------
// Linux: abstract Unix socket

async function socketLock(dir: string): Promise<Unlock | undefined> {
  const { dev, ino } = statSync(dir, { bigint: true });
  const name = `\0chat-server-pglite-${createHash("sha256").update(`${dev}:${ino}`).digest("hex").slice(0, 32)}`;
  for (let attempt = 0; ; attempt++) {
    const server = net.createServer((socket) => {
      socket.on("error", () => {});
      socket.end(String(process.pid));
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(name, () => {
          server.off("error", reject);
          resolve();
        });
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE") return undefined; // no abstract sockets here: use the pid file
      const holder = await socketHolder(name);
      // "gone": the holder is dying (a killed multi-threaded process shows as a zombie a moment
      // before its last thread has closed its files): try again shortly.
      if (holder === "gone" && attempt < 50) {
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      throw new DataDirInUseError(dir, typeof holder === "number" ? holder : undefined);
    }
    server.unref(); // the lock alone does not keep the process alive
    server.on("error", () => {});
    return once(() => new Promise<void>((resolve) => server.close(() => resolve())));
  }
}

/** The holder's pid; "busy" if it does not answer within 1 s; "gone" if the connection fails or closes unanswered. */
function socketHolder(name: string): Promise<number | "busy" | "gone"> {
  return new Promise((resolve) => {
    let text = "";
    const socket = net.connect(name);
    const done = (result: number | "busy" | "gone") => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done("busy"), 1000);
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => (text += String(chunk)));
    socket.on("end", () => done(Number(text) > 0 ? Number(text) : "gone"));
    socket.on("error", () => done("gone"));
  });
}

// ---------------------------------------------------------------------------------------------
// Elsewhere: pid file with the owner's identity

interface Owner {
  pid: number;
  /** The owner's start time as `ps -o lstart=` prints it, or null where ps is unavailable. */
  started: string | null;
}

/** Lock files held by this process (its own pid in a lock file proves nothing about the lock). */
const held = new Set<string>();

function pidFileLock(dir: string): Unlock {
  const file = resolve(lockFileOf(dir));
  const me: Owner = { pid: process.pid, started: processInfo(process.pid)?.started ?? null };
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, `${JSON.stringify(me)}\n`, { flag: "wx" });
      held.add(file);
      return once(async () => {
        held.delete(file);
        rmSync(file, { force: true });
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 3) throw e;
      const owner = parseOwner(readOrUndefined(file));
      if (held.has(file)) throw new DataDirInUseError(dir, process.pid);
      if (owner && ownerAlive(owner)) throw new DataDirInUseError(dir, owner.pid);
      rmSync(file, { force: true }); // stale: its owner is gone
    }
  }
}

function parseOwner(text: string | undefined): Owner | undefined {
  try {
    const o = JSON.parse(text ?? "") as Partial<Owner>;
    // A bare number is an older version's pid file, which cannot be verified: stale.
    if (typeof o === "object" && o && typeof o.pid === "number" && o.pid > 0)
      return { pid: o.pid, started: typeof o.started === "string" ? o.started : null };
  } catch {
    /* unreadable or empty: stale */
  }
  return undefined;
}

function ownerAlive(owner: Owner): boolean {
  if (owner.pid === process.pid) return false; // not held (see `held`): left by this process
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false; // ESRCH: no such process
  }
  const info = processInfo(owner.pid);
  if (info === undefined) return true; // no ps: the pid is alive, that is all we can tell
  if (info === null || info.zombie) return false;
  return owner.started === null || owner.started === info.started; // else the pid was reused
}

/** From ps: null if there is no such process, undefined if ps cannot tell. */
function processInfo(pid: number): { zombie: boolean; started: string } | null | undefined {
  let out: string;
  try {
    out = execFileSync("ps", ["-o", "stat=", "-o", "lstart=", "-p", String(pid)], {
      encoding: "utf8",
      env: { ...process.env, LC_ALL: "C" },
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 5000,
    });
  } catch (e) {
    return (e as { status?: number | null }).status === 1 ? null : undefined; // 1: no such process
  }
  const m = /^\s*(\S+)\s+(.+?)\s*$/.exec(out.split("\n")[0] ?? "");
  return m ? { zombie: m[1]!.startsWith("Z"), started: m[2]!.replace(/\s+/g, " ") } : null;
}

// ---------------------------------------------------------------------------------------------

function lockFileOf(dir: string): string {
  return `${dir.replace(/[\\/]+$/, "")}.lock`;
}

function readOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}
