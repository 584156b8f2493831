/**
 * The admin CLI, run as a user runs it (a process: `node dist/server/manage.js`, what
 * `npm run manage --` runs, built once by the global set-up), on an embedded database in a
 * temporary DATA_DIR.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/index.ts";
import { MANAGE_COMMAND } from "../helpers/compiled.ts";
import { writeZip } from "../helpers/zip.ts";
import { slackExportFixture } from "../fixtures/slack-export.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), "manage-test-"));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function manageIn(
  dir: string,
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      MANAGE_COMMAND[0],
      [...MANAGE_COMMAND.slice(1), ...args],
      {
        cwd: root,
        env: { ...process.env, DATA_DIR: dir, DATABASE_URL: "", LOG_LEVEL: "warn", ...options.env },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(options.input ?? "");
  });
}
const manage = (...args: string[]) => manageIn(dataDir, args);

/** The value of a `label: value` line of a command's output. */
const field = (out: string, label: string) =>
  new RegExp(`^\\s*${label}:\\s+(.*)$`, "m").exec(out)?.[1];

async function withDb<T>(
  dir: string,
  f: (db: Awaited<ReturnType<typeof openDatabase>>["prisma"]) => Promise<T>,
): Promise<T> {
  const db = await openDatabase({ dataDir: join(dir, "postgres") });
  try {
    return await f(db.prisma);
  } finally {
    await db.close();
  }
}

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("npm run manage: the command line", () => {
  it("--help lists the commands, and each command's --help its options (exit 0)", async () => {
    const all = await manage("--help");
    expect(all.code).toBe(0);
    for (const name of ["create-realm", "create-user", "create-channel", "populate-db"]) {
      expect(all.stdout).toContain(`  ${name}`);
      const one = await manage(name, "--help");
      expect(one).toMatchObject({ code: 0, stderr: "" });
      expect(one.stdout).toContain(`usage: npm run manage -- ${name}`);
      expect(one.stdout).toContain("--help");
    }
    expect((await manage("create-user", "-h")).stdout).toContain("--password-stdin");
  });

  it("an unknown command or option, a missing value or argument is one line and exit 2, with no stack trace", async () => {
    const cases: [string[], string][] = [
      [[], "usage: npm run manage -- <command>"],
      [
        ["frobnicate"],
        "error: unknown command 'frobnicate' (commands: create-realm, create-user, create-channel, populate-db, populate-scale, export, import-zulip, import-slack; see npm run manage -- --help)\n",
      ],
      [
        ["create-user", "--emial", "a@b.example"],
        "error: unknown option --emial for create-user (see npm run manage -- create-user --help)\n",
      ],
      [
        ["create-user", "--email"],
        "error: --email needs a value (see npm run manage -- create-user --help)\n",
      ],
      [
        ["create-user", "--email", "a@b.example"],
        "error: create-user needs --full-name (see npm run manage -- create-user --help)\n",
      ],
      [
        ["create-channel", "backend"],
        "error: unexpected argument 'backend' for create-channel: options are written --option VALUE (see npm run manage -- create-channel --help)\n",
      ],
    ];
    for (const [args, stderr] of cases) {
      const run = await manage(...args);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stdout).toBe("");
      if (args.length) expect(run.stderr).toBe(stderr);
      else expect(run.stderr).toContain(stderr);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it("checks every value with Zulip's rules before opening the database, naming the option in every message", async () => {
    const existing = join(dataDir, "existing-creds.json");
    writeFileSync(existing, "{}\n");
    // The database is unreachable: only a problem found before opening it can be reported.
    const env = { DATABASE_URL: "postgresql://postgres@127.0.0.1:1/none" };
    const cases: [string[], string][] = [
      [
        ["create-realm", "--name", "Acme", "--email", "not-an-email"],
        "--email not-an-email: Enter a valid email address.",
      ],
      [
        ["create-realm", "--name", "Acme", "--email", "a@b.example", "--string-id=-acme"],
        "--string-id -acme: Subdomain cannot start or end with a '-'.",
      ],
      [
        ["create-realm", "--name", "Acme", "--email", "a@b.example", "--string-id", "Acme"],
        "--string-id Acme: Subdomain can only have lowercase letters, numbers, and '-'s.",
      ],
      [
        ["create-realm", "--name", "Acme", "--email", "a@b.example", "--string-id", "ab"],
        "--string-id ab: Subdomain needs to have length 3 or greater.",
      ],
      [
        ["create-realm", "--name", "Acme", "--email", "a@b.example", "--string-id", "www"],
        "--string-id www: Subdomain reserved. Please choose a different one.",
      ],
      [
        ["create-realm", "--name", "A", "--email", "a@b.example"],
        "the id 'a' made from the name cannot be used (Subdomain needs to have length 3 or greater.): choose one with --string-id",
      ],
      [
        ["create-realm", "--name", "x".repeat(41), "--email", "a@b.example"],
        "--name: an organization's name has 1 to 40 characters",
      ],
      [
        ["create-realm", "--name", "Acme", "--email", "b@x.example"],
        "give the owner's name with --full-name (the email's local part 'b' is not a valid name: Name too short!)",
      ],
      [
        [
          "create-realm",
          "--name",
          "Acme",
          "--email",
          "a@b.example",
          "--full-name",
          "Boss",
          "--password",
          "12345",
        ],
        "--password: The password is too weak: use at least 6 characters.",
      ],
      [
        [
          "create-realm",
          "--name",
          "Acme",
          "--email",
          "a@b.example",
          "--full-name",
          "Boss",
          "--password-env",
          "PW",
        ],
        "--password-env PW: The password is too weak: use at least 6 characters.",
      ],
      [
        ["create-realm", "--name", "Acme", "--email", "a@b.example", "--full-name", "B"],
        "--full-name B: Name too short!",
      ],
      [
        [
          "create-realm",
          "--name",
          "Acme",
          "--email",
          "a@b.example",
          "--full-name",
          "Boss",
          "--password",
          "123456",
          "--password-stdin",
        ],
        "give the password one way only, not with --password and --password-stdin",
      ],
      [
        [
          "create-realm",
          "--name",
          "Acme",
          "--email",
          "a@b.example",
          "--full-name",
          "Boss",
          "--password-env",
          "NO_SUCH_VARIABLE",
        ],
        "--password-env NO_SUCH_VARIABLE: the environment variable NO_SUCH_VARIABLE is not set",
      ],
      [
        ["create-user", "--email", "a@b.example", "--full-name", "A *bold* name"],
        "--full-name A *bold* name: Invalid characters in name!",
      ],
      [["create-user", "--email", "bad", "--full-name", "B"], "--full-name B: Name too short!"],
      [
        ["create-user", "--email", "bad", "--full-name", "Ann"],
        "--email bad: Enter a valid email address.",
      ],
      [
        ["create-user", "--email", "a@b.example", "--full-name", "Ann", "--role", "king"],
        "--role king: use owner, administrator, moderator, member or guest",
      ],
      [
        ["create-user", "--email", "a@b.example", "--full-name", "Ann", "--realm", "Not An Id"],
        "--realm Not An Id: an organization id has only lowercase letters, numbers and '-'s",
      ],
      [["create-channel", "--name", "   "], `--name "   ": Channel name can't be empty.`],
      [
        ["create-channel", "--name", "x".repeat(61)],
        `--name ${"x".repeat(61)}: Channel name too long (limit: 60 characters).`,
      ],
      [
        ["create-channel", "--name", "ops", "--private", "--default"],
        "--default with --private: a default channel cannot be private.",
      ],
      [
        ["populate-db", "--credentials", "/no/such/dir/creds.json"],
        "--credentials /no/such/dir/creds.json: the directory /no/such/dir does not exist",
      ],
      [
        ["populate-db", "--credentials", existing],
        `--credentials ${existing}: the file exists (it may hold another database's keys): name another file, or add --force to replace it`,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await manageIn(dataDir, args, { env: { ...env, PW: "12345" } });
      expect(run.stderr, args.join(" ")).toBe(
        `error: ${message} (see npm run manage -- ${args[0]} --help)\n`,
      );
      expect(run.code).toBe(2);
    }
    const badPort = await manageIn(dataDir, ["create-channel", "--name", "ops"], {
      env: { PORT: "http" },
    });
    expect(badPort).toMatchObject({
      code: 1,
      stderr: 'error: PORT must be a port number (0 to 65535), not "http"\n',
    });
  }, 180_000);
});

// Each command is a process that opens (and, for populate-db, fills) a database: on a loaded
// machine one takes well over vitest's default 30 s.
// Each command initialises a fresh data directory (several seconds; minutes on a busy machine).
describe("npm run manage: the commands", { timeout: 300_000 }, () => {
  it("populate-db creates the development organization and writes its credentials, with the host the server will use", async () => {
    const file = join(dataDir, "creds.json");
    const run = await manageIn(dataDir, ["populate-db", "--credentials", file], {
      env: { PORT: "9876" },
    });
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(field(run.stdout, "organization URL")).toBe("http://127.0.0.1:9876");
    expect(field(run.stdout, "credentials")).toBe(file);
    const creds = JSON.parse(readFileSync(file, "utf8"));
    expect(creds.realm).toMatchObject({
      name: "Zulip Dev",
      string_id: "zulip",
      host: "127.0.0.1:9876",
    });
    expect(Object.keys(creds.users).sort()).toEqual([
      "aaron",
      "cordelia",
      "desdemona",
      "hamlet",
      "iago",
      "othello",
      "polonius",
      "prospero",
      "shiva",
    ]);
    expect(creds.users.desdemona).toMatchObject({ email: "desdemona@zulip.com", role: 100 });
    expect(creds.users.polonius.role).toBe(600);
    expect(creds.users.hamlet.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(creds.users.hamlet.password).toBeTruthy();
    expect(Object.keys(creds.bots).sort()).toEqual(["default-bot", "notification-bot"]);
    expect(Object.keys(creds.channels).sort()).toEqual([
      "Denmark",
      "Rome",
      "Scotland",
      "Venice",
      "Verona",
      "core team",
    ]);
  });

  it("populate-db writes EXTERNAL_HOST when it is set, and refuses a database that already has an organization", async () => {
    const dir = mkdtempSync(join(tmpdir(), "manage-test-"));
    try {
      // --force replaces a file that exists.
      const file = join(dir, "creds.json");
      writeFileSync(file, "old keys\n");
      expect(
        (
          await manageIn(dir, ["populate-db", "--credentials", file, "--force"], {
            env: { EXTERNAL_HOST: "chat.example.com" },
          })
        ).code,
      ).toBe(0);
      expect(JSON.parse(readFileSync(file, "utf8")).realm.host).toBe("chat.example.com");
      const again = await manageIn(dir, ["populate-db", "--credentials", join(dir, "again.json")]);
      expect(again).toMatchObject({
        code: 1,
        stderr:
          "error: populate-db needs an empty database, and this one already has an organization.\n",
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("create-realm makes an organization as Zulip does: owner, default channels, announcements in general, Notification Bot", async () => {
    const run = await manageIn(
      dataDir,
      [
        "create-realm",
        "--name",
        "Second Org",
        "--email",
        "boss@second.example",
        "--full-name",
        "The Boss",
        "--password-stdin",
      ],
      { input: "correct horse\n" },
    );
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/^Created the organization "Second Org"\.\n/);
    expect(field(run.stdout, "organization id")).toBe("second-org");
    expect(field(run.stdout, "organization URL")).toBe("http://second-org.127.0.0.1:9991");
    // That host resolves nowhere: how to reach it (the URL itself is the API's realm_url).
    expect(field(run.stdout, "in a browser")).toBe("http://second-org.localhost:9991");
    expect(field(run.stdout, "with curl")).toBe(
      "curl -H 'Host: second-org.127.0.0.1:9991' http://127.0.0.1:9991/api/v1/server_settings",
    );
    expect(field(run.stdout, "owner email")).toBe("boss@second.example");
    expect(field(run.stdout, "default channels")).toBe("Zulip, sandbox, general");
    const key = field(run.stdout, "API key")!;
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    await withDb(dataDir, async (db) => {
      const boss = await db.userProfile.findFirstOrThrow({
        where: { apiKey: key },
        include: { realm: true },
      });
      expect(boss).toMatchObject({
        id: Number(field(run.stdout, "owner user id")),
        role: 100,
        fullName: "The Boss",
        realm: { name: "Second Org", stringId: "second-org" },
      });
      expect(boss.passwordHash).toMatch(/^scrypt\$/);
      const channels = await db.stream.findMany({
        where: { realmId: boss.realmId },
        include: { defaultStreams: true, recipient: { include: { subscriptions: true } } },
        orderBy: { id: "asc" },
      });
      expect(
        channels.map((c) => [
          c.name,
          c.description,
          c.inviteOnly,
          c.defaultStreams.length,
          c.recipient!.subscriptions.map((s) => s.userProfileId),
        ]),
      ).toEqual([
        ["Zulip", "Questions and discussion about using Zulip.", false, 1, [boss.id]],
        ["sandbox", "Experiment with Zulip here. :test_tube:", false, 1, [boss.id]],
        ["general", "For team-wide conversations", false, 1, [boss.id]],
      ]);
      expect(boss.realm.newStreamAnnouncementsStreamId).toBe(channels[2]!.id);
      expect(
        await db.userProfile.count({
          where: {
            realmId: boss.realmId,
            isBot: true,
            deliveryEmail: "notification-bot@zulip.com",
          },
        }),
      ).toBe(1);
    });
    const taken = await manageIn(dataDir, [
      "create-realm",
      "--name",
      "Other",
      "--string-id",
      "second-org",
      "--email",
      "x@y.example",
      "--full-name",
      "Xavier",
    ]);
    expect(taken).toMatchObject({
      code: 1,
      stdout: "",
      stderr:
        "error: --string-id second-org: Subdomain already in use. Please choose a different one.\n",
    });
    // Without --string-id the id comes from --name: the message says so, and what to do.
    const sameName = await manageIn(dataDir, [
      "create-realm",
      "--name",
      "Second  Org!",
      "--email",
      "x@y.example",
      "--full-name",
      "Xavier",
    ]);
    expect(sameName).toMatchObject({
      code: 1,
      stdout: "",
      stderr:
        "error: the organization id 'second-org', made from --name Second  Org!, is already in use: choose another with --string-id\n",
    });
  });

  it("create-user makes a user subscribed to the default channels; a duplicate address is a clear message", async () => {
    const run = await manageIn(
      dataDir,
      [
        "create-user",
        "--realm",
        "second-org",
        "--email",
        "newbie@second.example",
        "--full-name",
        "New Bie",
        "--role",
        "moderator",
        "--password-env",
        "PW",
      ],
      { env: { PW: "s3cret!" } },
    );
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/^Created the user "New Bie" \(moderator\) in "Second Org"\.\n/);
    expect(field(run.stdout, "email")).toBe("newbie@second.example");
    const key = field(run.stdout, "API key")!;
    await withDb(dataDir, async (db) => {
      const user = await db.userProfile.findFirstOrThrow({
        where: { apiKey: key },
        include: { subscriptions: true },
      });
      expect(user).toMatchObject({
        id: Number(field(run.stdout, "user id")),
        deliveryEmail: "newbie@second.example",
        role: 300,
        fullName: "New Bie",
      });
      expect(user.subscriptions).toHaveLength(3);
    });
    const dup = await manageIn(dataDir, [
      "create-user",
      "--realm",
      "second-org",
      "--email",
      "NEWBIE@second.example",
      "--full-name",
      "Dup Licate",
    ]);
    expect(dup).toMatchObject({
      code: 1,
      stdout: "",
      stderr:
        "error: --email NEWBIE@second.example: Email 'NEWBIE@second.example' already in use\n",
    });
    // Without --realm: the first organization (the development one here).
    const first = await manage(
      "create-user",
      "--email",
      "plain@zulip.com",
      "--full-name",
      "Plain User",
    );
    expect(first.stdout).toContain('(member) in "Zulip Dev"');
    const missing = await manage(
      "create-user",
      "--realm",
      "nowhere",
      "--email",
      "a@b.example",
      "--full-name",
      "Ann",
    );
    expect(missing).toMatchObject({
      code: 1,
      stderr: "error: --realm nowhere: no organization has this id\n",
    });
  });

  it("create-channel makes a channel, a default one with --default; a duplicate name is a clear message", async () => {
    const run = await manage(
      "create-channel",
      "--realm",
      "second-org",
      "--name",
      " ops ",
      "--description",
      "Runbooks\nand *alerts*",
      "--default",
    );
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/^Created the channel #ops in "Second Org"\.\n/);
    expect(field(run.stdout, "default channel")).toBe("yes");
    const id = Number(field(run.stdout, "channel id"));
    await withDb(dataDir, async (db) => {
      const stream = await db.stream.findUniqueOrThrow({
        where: { id },
        include: { defaultStreams: true },
      });
      expect(stream).toMatchObject({
        name: "ops",
        description: "Runbooks and *alerts*",
        renderedDescription: "<p>Runbooks and <em>alerts</em></p>",
        inviteOnly: false,
      });
      expect(stream.defaultStreams).toHaveLength(1);
    });
    const secret = await manage("create-channel", "--name", "secret plans", "--private");
    expect(field(secret.stdout, "privacy")).toBe("private");
    const dup = await manage("create-channel", "--realm", "second-org", "--name", "OPS");
    expect(dup).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "error: --name OPS: Channel 'OPS' already exists\n",
    });
  });
  it("export writes a .tar.gz that import-zulip makes a new organization of; a second import, a missing file and a broken archive are refused in one line", async () => {
    const out = mkdtempSync(join(tmpdir(), "manage-export-"));
    try {
      const exported = await manage("export", "--realm", "zulip", "--output", out);
      expect(exported).toMatchObject({ code: 0, stderr: "" });
      const file = field(exported.stdout, "file")!;
      expect(file).toMatch(/zulip-export-zulip-\d{8}T\d{6}Z\.tar\.gz$/);
      expect(Number(field(exported.stdout, "messages"))).toBeGreaterThan(0);

      const imported = await manage("import-zulip", file, "--subdomain", "copy");
      expect(imported).toMatchObject({ code: 0, stderr: "" });
      expect(imported.stdout).toMatch(/^Imported "Zulip Dev"\./);
      expect(field(imported.stdout, "messages")).toBe(field(exported.stdout, "messages"));
      // The files travel too, and the import says what it stored of them.
      expect(field(exported.stdout, "files")).toMatch(
        /^\d+ uploads, \d+ avatars, \d+ custom emoji, \d+ icons and logos$/,
      );
      expect(field(imported.stdout, "files")).toBe(field(exported.stdout, "files"));
      const copied = await withDb(dataDir, (db) =>
        db.realm.findUniqueOrThrow({ where: { stringId: "copy" } }),
      );
      expect(copied.name).toBe("Zulip Dev");

      const again = await manage("import-zulip", file, "--subdomain", "copy");
      expect(again).toMatchObject({
        code: 1,
        stdout: "",
        stderr:
          "error: an organization with the subdomain 'copy' exists already: an import makes a new organization (give another with --subdomain)\n",
      });
      expect(await manage("import-zulip", join(out, "nothing.tar.gz"))).toMatchObject({
        code: 2,
        stderr: `error: ${join(out, "nothing.tar.gz")}: no such file or directory (see npm run manage -- import-zulip --help)\n`,
      });
      const broken = join(out, "broken.tar.gz");
      writeFileSync(broken, readFileSync(file).subarray(0, 200));
      const refused = await manage("import-zulip", broken, "--subdomain", "broken");
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^error: .*broken\.tar\.gz: not a readable archive \(.*\)/);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
  it("import-slack takes a Slack export's .zip and reports what it could not map; without --subdomain it is a usage error", async () => {
    const out = mkdtempSync(join(tmpdir(), "manage-slack-"));
    try {
      const zip = join(out, "Acme Slack export.zip");
      writeZip(
        zip,
        Object.fromEntries(
          Object.entries(slackExportFixture()).map(([file, data]) => [file, JSON.stringify(data)]),
        ),
      );
      const run = await manage("import-slack", zip, "--subdomain", "acme", "--name", "Acme");
      expect(run).toMatchObject({ code: 0, stderr: "" });
      expect(run.stdout).toMatch(/^Imported "Acme" from Slack\./);
      expect(field(run.stdout, "messages")).toBe("10");
      expect(run.stdout).toContain("not mapped:\n  1 channel_join events skipped\n");
      // Without --token the file stays at Slack; a token that is none is refused before anything.
      expect(run.stdout).toContain("  1 files linked, not copied\n");
      expect(field(run.stdout, "files")).toBe("0");
      expect((await manage("import-slack", "--help")).stdout).toContain("--token TOKEN");
      expect(
        await manage("import-slack", zip, "--subdomain", "acme2", "--token", "secret"),
      ).toMatchObject({
        code: 2,
        stderr:
          "error: --token: a Slack token starts with xoxb- or xoxp- (see npm run manage -- import-slack --help)\n",
      });
      const missing = await manage("import-slack", zip);
      expect(missing).toMatchObject({
        code: 2,
        stderr:
          "error: import-slack needs --subdomain (see npm run manage -- import-slack --help)\n",
      });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
