/**
 * `npm run manage -- <command> [options]`: administration from the command line, on the same
 * DATA_DIR or DATABASE_URL as the server (run it while the server is stopped when using the
 * embedded database: one process owns a PGlite data directory at a time).
 *
 *   create-realm --name NAME --email OWNER_EMAIL --password PASSWORD [--full-name NAME] [--string-id ID]
 *   create-user  --email EMAIL --full-name NAME [--role owner|administrator|moderator|member|guest] [--password PASSWORD] [--realm STRING_ID]
 *   populate-db  --credentials FILE
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { doCreateRealm } from "./actions/realms.ts";
import { createUser, doCreateUser } from "./actions/users.ts";
import { JsonableError } from "./errors.ts";
import { hashPassword } from "./lib/passwords.ts";
import { fakeEmailDomain } from "./lib/realms.ts";
import { Role } from "./lib/users.ts";
import { openForCommand } from "./manage/context.ts";
import { populateDevRealm } from "./manage/populate-db.ts";

const ROLES: Record<string, number> = { owner: Role.OWNER, administrator: Role.ADMINISTRATOR, admin: Role.ADMINISTRATOR, moderator: Role.MODERATOR, member: Role.MEMBER, guest: Role.GUEST };
const USAGE = `usage: npm run manage -- <command> [options]
  create-realm --name NAME --email OWNER_EMAIL --password PASSWORD [--full-name NAME] [--string-id ID]
  create-user  --email EMAIL --full-name NAME [--role owner|administrator|moderator|member|guest] [--password PASSWORD] [--realm STRING_ID]
  populate-db  --credentials FILE`;

const [command, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: {
    name: { type: "string" },
    email: { type: "string" },
    password: { type: "string" },
    "full-name": { type: "string" },
    "string-id": { type: "string" },
    role: { type: "string" },
    realm: { type: "string" },
    credentials: { type: "string" },
  },
});

function need(option: keyof typeof values): string {
  const v = values[option];
  if (typeof v !== "string" || v === "") throw new JsonableError(`--${option} is required\n${USAGE}`);
  return v;
}

async function main() {
  if (!command || !["create-realm", "create-user", "populate-db"].includes(command)) throw new JsonableError(USAGE);
  const { deps, database } = await openForCommand();
  try {
    if (command === "populate-db") {
      const file = need("credentials");
      const creds = await populateDevRealm(deps);
      writeFileSync(file, JSON.stringify(creds, null, 2) + "\n", { mode: 0o600 });
      console.log(`Created organization "${creds.realm.name}" with ${Object.keys(creds.users).length} users; credentials written to ${file}`);
    } else if (command === "create-realm") {
      const name = need("name");
      const email = need("email");
      const passwordHash = await hashPassword(need("password"));
      const stringId = values["string-id"] ?? (name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "org");
      const owner = await deps.db.$transaction(async (tx) => {
        const realm = await doCreateRealm(tx, { name, stringId });
        return doCreateUser(tx, realm, { email, fullName: values["full-name"] ?? email.split("@")[0]!, role: Role.OWNER, passwordHash }, await fakeEmailDomain(tx, realm, deps.config));
      });
      console.log(owner.apiKey);
    } else {
      const email = need("email");
      const fullName = need("full-name");
      const role = ROLES[values.role ?? "member"] ?? Number(values.role);
      if (!Object.values(Role).includes(role as 400)) throw new JsonableError(`Unknown role: ${values.role}`);
      const realm = values.realm !== undefined
        ? await deps.db.realm.findFirst({ where: { stringId: values.realm } })
        : await deps.db.realm.findFirst({ orderBy: { id: "asc" } });
      if (!realm) throw new JsonableError(values.realm !== undefined ? `No organization '${values.realm}'` : "No organization yet: run create-realm first");
      const passwordHash = values.password ? await hashPassword(values.password) : null;
      const user = await createUser(deps, realm, { email, fullName, role, passwordHash });
      console.log(user.apiKey);
    }
  } finally {
    deps.events.close();
    await database.close();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
