/**
 * The lock of an embedded data directory (server/db/lock.ts): refused while another opener holds
 * it, in this process or another; taken over at once when its holder was killed with SIGKILL, even
 * while the dead holder is still an unreaped zombie; never blocked by a pid file that names an
 * unrelated live process. The Linux socket lock and the pid-file lock used elsewhere are both
 * tested here (the pid-file one needs ps).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/index.ts";
import {
  DataDirInUseError,
  lockDataDir,
  type LockMethod,
  type Unlock,
} from "../../server/db/lock.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "db-lock-test-"));
const holderScript = join(work, "holder.mts");
writeFileSync(
  holderScript,
  `import { lockDataDir } from ${JSON.stringify(join(root, "server/db/lock.ts"))};
await lockDataDir(process.argv[2], process.argv[3]);
console.log("locked " + process.pid);
setInterval(() => {}, 60_000);
`,
);

const isLinux = process.platform === "linux";
const hasPs = (() => {
  try {
    execFileSync("ps", ["-o", "stat=", "-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

let n = 0;
const freshDir = () => {
  const dir = join(work, `data${++n}`, "postgres");
  mkdirSync(dir, { recursive: true });
  return dir;
};

const children: ChildProcess[] = [];
const unlocks: Unlock[] = [];
afterEach(async () => {
  for (const c of children.splice(0))
    if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const u of unlocks.splice(0)) await u();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const take = async (dir: string, method?: LockMethod) => {
  const unlock = await lockDataDir(dir, method);
  unlocks.push(unlock);
  return unlock;
};

/**
 * Starts a node process that takes the lock and prints its pid. With `zombie`, its parent is a
 * shell that exec's into `sleep` and never reaps it, so once killed it stays a zombie.
 */
function startHolder(
  dir: string,
  method: LockMethod,
  { zombie = false } = {},
): Promise<{ pid: number; child: ChildProcess }> {
  const node = [process.execPath, "--import", "tsx", holderScript, dir, method];
  const child = zombie
    ? spawn("sh", ["-c", `${node.map((a) => `'${a}'`).join(" ")} & exec sleep 120`], {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"],
      })
    : spawn(node[0]!, node.slice(1), { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /locked (\d+)/.exec(out);
      if (m) resolve({ pid: Number(m[1]), child });
    });
    child.on("exit", (code) =>
      reject(new Error(`holder exited (${code}) before taking the lock: ${out}`)),
    );
  });
}

const procState = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0];
  } catch {
    return undefined;
  }
};

async function killAndWaitForZombie(pid: number) {
  process.kill(pid, "SIGKILL");
  for (let i = 0; i < 200 && procState(pid) !== "Z"; i++)
    await new Promise((r) => setTimeout(r, 10));
  // The precondition of the test: the pid still exists, as a zombie (kill(pid, 0) succeeds).
  expect(procState(pid)).toBe("Z");
  expect(() => process.kill(pid, 0)).not.toThrow();
}

const methods: { method: LockMethod; run: boolean }[] = [
  { method: "socket", run: isLinux },
  { method: "pidfile", run: hasPs },
];

describe.each(methods)("lockDataDir ($method)", ({ method, run }) => {
  it.runIf(run)(
    "refuses a second opener in the same process until the first releases it",
    async () => {
      const dir = freshDir();
      const unlock = await take(dir, method);
      const second = lockDataDir(dir, method);
      await expect(second).rejects.toBeInstanceOf(DataDirInUseError);
      await expect(second).rejects.toThrow(/is in use by this process: stop it first/);
      await unlock();
      await take(dir, method);
    },
  );

  it.runIf(run)(
    "refuses an opener while another process holds it, naming that process",
    async () => {
      const dir = freshDir();
      const { pid } = await startHolder(dir, method);
      await expect(lockDataDir(dir, method)).rejects.toThrow(
        `The data directory ${dir} is in use by process ${pid}: stop it first`,
      );
    },
  );

  it.runIf(run && isLinux)(
    "takes over at once from a holder killed with SIGKILL, while it is still a zombie",
    async () => {
      const dir = freshDir();
      const { pid } = await startHolder(dir, method, { zombie: true });
      await expect(lockDataDir(dir, method)).rejects.toThrow(DataDirInUseError);
      await killAndWaitForZombie(pid);
      await take(dir, method);
    },
  );

  it.runIf(run)("is not blocked by a pid file naming an unrelated live process", async () => {
    for (const pid of [1, process.ppid]) {
      const dir = freshDir();
      expect(() => process.kill(pid, 0)).not.toThrow(/ESRCH/); // alive (EPERM for pid 1 is fine)
      for (const content of [
        String(pid),
        JSON.stringify({ pid, started: "Thu Jan  1 00:00:00 1970" }),
      ]) {
        writeFileSync(`${dir}.lock`, content);
        const unlock = await lockDataDir(dir, method);
        await unlock();
      }
    }
  });
});

describe("lockDataDir (pidfile) identity check", () => {
  it.runIf(hasPs)("honours a pid file naming a live process with its real start time", async () => {
    // The counterpart of the test above: the same file with the right start time blocks, so the
    // start time is what tells a reused pid from the owner.
    const dir = freshDir();
    const started = execFileSync("ps", ["-o", "lstart=", "-p", String(process.ppid)], {
      encoding: "utf8",
      env: { ...process.env, LC_ALL: "C" },
    })
      .trim()
      .replace(/\s+/g, " ");
    writeFileSync(`${dir}.lock`, JSON.stringify({ pid: process.ppid, started }));
    await expect(lockDataDir(dir, "pidfile")).rejects.toThrow(
      `is in use by process ${process.ppid}`,
    );
    expect(existsSync(`${dir}.lock`)).toBe(true);
  });
});

describe("openDatabase", () => {
  it("refuses a second opener of the same data directory, and reopens it once closed", async () => {
    const dir = freshDir();
    const db = await openDatabase({ dataDir: dir, migrate: false, fsync: false });
    try {
      await expect(openDatabase({ dataDir: dir, migrate: false, fsync: false })).rejects.toThrow(
        /is in use by this process: stop it first/,
      );
    } finally {
      await db.close();
    }
    const again = await openDatabase({ dataDir: dir, migrate: false, fsync: false });
    await again.close();
  }, 120_000); // initdb, slow on a loaded machine
});
