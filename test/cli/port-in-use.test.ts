/**
 * A port in use is found before anything is opened: started on a fresh DATA_DIR with its port
 * (or its metrics port) taken, the server says so in one error line with what to do, exits 1,
 * and leaves no database behind (it used to create and migrate one, then fail to listen).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function occupiedPort(): Promise<Server> {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  return taken;
}
const portOf = (s: Server) => (s.address() as { port: number }).port;

/** Runs the server until it exits; its stdout's JSON lines, its exit code. */
function run(env: Record<string, string>) {
  const proc = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: "",
      PGLITE_FSYNC: "off",
      LOG_LEVEL: "info",
      LOG_FORMAT: "",
      HOST: "127.0.0.1",
      METRICS_PORT: "",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
  proc.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
  return new Promise<{ code: number | null; lines: Record<string, any>[]; said: string }>(
    (resolve) =>
      proc.once("exit", (code) => {
        clearTimeout(timer);
        const lines = out
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, any>);
        resolve({ code, lines, said: `${out}\n${err}` });
      }),
  );
}

function freshDataDir(): string {
  const parent = mkdtempSync(join(tmpdir(), "port-in-use-"));
  dirs.push(parent);
  return join(parent, "data");
}

describe("a port in use at start-up", () => {
  it("the API's: one error line saying so and what to do, exit 1, no database created", async () => {
    const taken = await occupiedPort();
    const dataDir = freshDataDir();
    try {
      const r = await run({ DATA_DIR: dataDir, PORT: String(portOf(taken)) });
      expect(r.code, r.said).toBe(1);
      expect(r.lines.at(-1), r.said).toMatchObject({
        level: 50,
        msg: `cannot start: cannot listen on 127.0.0.1:${portOf(taken)} for the API: the address is in use`,
        hint: expect.stringContaining("choose another port"),
      });
      expect(r.lines.filter((l) => l.level >= 50)).toHaveLength(1);
      expect(r.lines.some((l) => l.msg === "database ready")).toBe(false);
      expect(r.lines.some((l) => String(l.msg).startsWith("listening on"))).toBe(false);
      // Nothing under DATA_DIR: no embedded database, no lock, no email folder.
      expect(existsSync(dataDir) ? readdirSync(dataDir) : [], r.said).toEqual([]);
    } finally {
      taken.close();
    }
  }, 90_000);

  it("the metrics listener's: the same, before the database too", async () => {
    const taken = await occupiedPort();
    const dataDir = freshDataDir();
    try {
      const r = await run({ DATA_DIR: dataDir, PORT: "0", METRICS_PORT: String(portOf(taken)) });
      expect(r.code, r.said).toBe(1);
      expect(r.lines.at(-1), r.said).toMatchObject({
        level: 50,
        msg: `cannot start: cannot listen on 127.0.0.1:${portOf(taken)} for the metrics: the address is in use`,
      });
      expect(r.lines.some((l) => l.msg === "database ready")).toBe(false);
      expect(existsSync(dataDir) ? readdirSync(dataDir) : [], r.said).toEqual([]);
    } finally {
      taken.close();
    }
  }, 90_000);
});
