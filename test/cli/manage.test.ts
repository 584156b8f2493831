/**
 * The admin CLI, run as a user runs it (`npm run manage -- …`), on an embedded database in a
 * temporary DATA_DIR.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), "manage-test-"));
const run = promisify(execFile);
const manage = (...args: string[]) =>
  run(process.execPath, ["--import", "tsx", "server/manage.ts", ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", LOG_LEVEL: "warn" },
  });

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("npm run manage", () => {
  it("populate-db creates the development organization and writes its credentials", async () => {
    const file = join(dataDir, "creds.json");
    await manage("populate-db", "--credentials", file);
    const creds = JSON.parse(readFileSync(file, "utf8"));
    expect(creds.realm).toMatchObject({ name: "Zulip Dev", string_id: "zulip" });
    expect(Object.keys(creds.users).sort()).toEqual(["aaron", "cordelia", "desdemona", "hamlet", "iago", "othello", "polonius", "prospero", "shiva"]);
    expect(creds.users.desdemona).toMatchObject({ email: "desdemona@zulip.com", role: 100 });
    expect(creds.users.polonius.role).toBe(600);
    expect(creds.users.hamlet.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(creds.users.hamlet.password).toBeTruthy();
    expect(Object.keys(creds.bots).sort()).toEqual(["default-bot", "notification-bot"]);
    expect(Object.keys(creds.channels).sort()).toEqual(["Denmark", "Rome", "Scotland", "Venice", "Verona", "core team"]);
  });

  it("populate-db refuses a database that already has an organization", async () => {
    await expect(manage("populate-db", "--credentials", join(dataDir, "again.json"))).rejects.toMatchObject({
      stderr: expect.stringContaining("populate-db needs an empty database"),
    });
  });

  it("create-user and create-realm print a new API key, and the user exists with their role", async () => {
    const { stdout } = await manage("create-user", "--email", "newbie@zulip.com", "--full-name", "New Bie", "--role", "moderator", "--password", "pw");
    const key = stdout.trim().split("\n").at(-1)!;
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    const owner = (await manage("create-realm", "--name", "Second Org", "--email", "boss@second.example", "--password", "pw")).stdout.trim().split("\n").at(-1)!;
    expect(owner).toMatch(/^[A-Za-z0-9]{32}$/);
    const db = await openDatabase({ dataDir: join(dataDir, "postgres") });
    try {
      expect(await db.prisma.userProfile.findFirst({ where: { apiKey: key } })).toMatchObject({ deliveryEmail: "newbie@zulip.com", role: 300, fullName: "New Bie" });
      const boss = await db.prisma.userProfile.findFirstOrThrow({ where: { apiKey: owner }, include: { realm: true } });
      expect(boss).toMatchObject({ role: 100, realm: { name: "Second Org", stringId: "second-org" } });
    } finally {
      await db.close();
    }
  });

  it("create-user refuses an address already in use", async () => {
    await expect(manage("create-user", "--email", "HAMLET@zulip.com", "--full-name", "Dup")).rejects.toMatchObject({
      stderr: expect.stringContaining("Email 'HAMLET@zulip.com' already in use"),
    });
  });
});
