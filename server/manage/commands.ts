/**
 * The admin CLI's commands (Zulip's management commands create_realm, create_user,
 * create_stream and the development populate_db). Each checks its whole command line first, with
 * the rules the API applies, and only then opens the database.
 */
import { existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { checkChannelName, doCreateChannelWithoutCreator } from "../actions/channels/channels.ts";
import { doCreateOrganization } from "../actions/realm/realm.ts";
import { doCreateUserWithDefaultChannels } from "../actions/users/users.ts";
import type { AppDeps } from "../context.ts";
import type { Realm } from "../db/index.ts";
import { JsonableError } from "../errors.ts";
import { INVALID_EMAIL, isValidEmail } from "../lib/email/addresses.ts";
import { hashPassword } from "../lib/auth/passwords.ts";
import {
  MAX_REALM_NAME_LENGTH,
  MAX_REALM_SUBDOMAIN_LENGTH,
  realmUrl,
  SUBDOMAIN_IN_USE,
  subdomainProblem,
} from "../lib/realm/realm.ts";
import { checkFullName, Role } from "../lib/users/users.ts";
import {
  asUsage,
  labelled,
  optionText,
  PASSWORD_OPTIONS,
  passwordFrom,
  reachHints,
  refusalsOf,
  UsageError,
  type Command,
  type Values,
} from "./cli.ts";
import { populateDevRealm } from "./populate-db.ts";
import { populateScaleCommand } from "./populate-scale.ts";

const ROLES: Record<string, number> = {
  owner: Role.OWNER,
  administrator: Role.ADMINISTRATOR,
  moderator: Role.MODERATOR,
  member: Role.MEMBER,
  guest: Role.GUEST,
};
const roleName = (role: number) =>
  Object.keys(ROLES).find((k) => ROLES[k] === role) ?? String(role);

function email(values: Values, option = "email"): string {
  const value = (values[option] as string).trim();
  if (!isValidEmail(value)) throw new UsageError(`--${option} ${value}: ${INVALID_EMAIL}`);
  return value;
}

/** The organization named by --realm (its string_id), or the first one created. */
export async function organization(deps: AppDeps, stringId: string | undefined): Promise<Realm> {
  const realm =
    stringId !== undefined
      ? await deps.db.realm.findUnique({ where: { stringId } })
      : await deps.db.realm.findFirst({ orderBy: { id: "asc" } });
  if (realm) return realm;
  throw new JsonableError(
    stringId !== undefined
      ? `${optionText("realm", stringId)}: no organization has this id`
      : "This server has no organization yet: run create-realm or populate-db first",
  );
}

/** --realm: the format of an organization id (the reserved names exist, so they are not refused here). */
export function realmOption(values: Values): string | undefined {
  const value = values.realm as string | undefined;
  if (value !== undefined && !/^[a-z0-9-]{0,40}$/.test(value))
    throw new UsageError(
      `--realm ${value}: an organization id has only lowercase letters, numbers and '-'s`,
    );
  return value;
}

/** The owner's name when none is given: the email's local part, if it makes a valid name. */
function defaultFullName(address: string): string {
  const local = address.split("@")[0]!;
  try {
    return checkFullName(local);
  } catch (err) {
    throw new UsageError(
      `give the owner's name with --full-name (the email's local part '${local}' is not a valid name: ${(err as Error).message})`,
    );
  }
}

const REALM_OPTION = {
  type: "string",
  value: "ORG_ID",
  description: "the organization's id (its subdomain); default: the first organization",
} as const;

export const createRealm: Command<{
  name: string;
  stringId: string;
  stringIdGiven: boolean;
  email: string;
  fullName: string;
  password: string | null;
}> = {
  name: "create-realm",
  summary:
    "Create an organization with its owner, its default channels (general, sandbox, Zulip) and Notification Bot.",
  options: {
    name: {
      type: "string",
      value: "NAME",
      description: `the organization's name (at most ${MAX_REALM_NAME_LENGTH} characters)`,
      required: true,
    },
    email: {
      type: "string",
      value: "EMAIL",
      description: "the owner's email address",
      required: true,
    },
    "full-name": {
      type: "string",
      value: "NAME",
      description: "the owner's name (default: the email's local part)",
    },
    "string-id": {
      type: "string",
      value: "ORG_ID",
      description: "the organization's id, used as its subdomain (default: made from the name)",
    },
    ...PASSWORD_OPTIONS,
  },
  notes:
    "The first organization is served on EXTERNAL_HOST itself, later ones on <ORG_ID>.<EXTERNAL_HOST>.\n" +
    "Without a password the owner can still use the API key printed here.",
  async check(values) {
    const name = (values.name as string).trim();
    if (name === "" || [...name].length > MAX_REALM_NAME_LENGTH)
      throw new UsageError(
        `--name: an organization's name has 1 to ${MAX_REALM_NAME_LENGTH} characters`,
      );
    const given = values["string-id"] as string | undefined;
    const stringId =
      given ??
      name
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, "-")
        .replace(/^-+|-+$/g, "")
        .slice(0, MAX_REALM_SUBDOMAIN_LENGTH)
        .replace(/-+$/, "");
    const problem = subdomainProblem(stringId);
    if (problem && given !== undefined) throw new UsageError(`--string-id ${given}: ${problem}`);
    if (problem)
      throw new UsageError(
        `the id '${stringId}' made from the name cannot be used (${problem}): choose one with --string-id`,
      );
    const owner = email(values);
    const givenName = values["full-name"] as string | undefined;
    const fullName =
      givenName !== undefined
        ? asUsage("full-name", givenName, () => checkFullName(givenName))
        : defaultFullName(owner);
    return {
      name,
      stringId,
      stringIdGiven: given !== undefined,
      email: owner,
      fullName,
      password: await passwordFrom(values),
    };
  },
  async run(input, deps) {
    const passwordHash = input.password === null ? null : await hashPassword(input.password);
    const create = () =>
      doCreateOrganization(deps, {
        name: input.name,
        stringId: input.stringId,
        owner: { email: input.email, fullName: input.fullName, passwordHash },
      });
    // Without --string-id the id comes from --name: say so, and how to choose another.
    const { realm, owner, channels, url } = await (input.stringIdGiven
      ? refusalsOf("string-id", input.stringId, /^Subdomain/, create)
      : create().catch((err: unknown) => {
          if (err instanceof JsonableError && err.message === SUBDOMAIN_IN_USE)
            throw new JsonableError(
              `the organization id '${input.stringId}', made from ${optionText("name", input.name)}, is already in use: choose another with --string-id`,
            );
          throw err;
        }));
    return labelled(`Created the organization "${realm.name}".`, [
      ["organization URL", url],
      ...reachHints(url),
      ["organization id", realm.stringId],
      ["owner email", owner.deliveryEmail],
      ["owner user id", owner.id],
      ["API key", owner.apiKey],
      ["password", input.password === null ? "none (log in with the API key)" : "set"],
      ["default channels", channels.map((c) => c.name).join(", ")],
    ]);
  },
};

export const createUserCommand: Command<{
  email: string;
  fullName: string;
  role: number;
  password: string | null;
  realm: string | undefined;
}> = {
  name: "create-user",
  summary: "Create a user in an organization, subscribed to its default channels.",
  options: {
    email: {
      type: "string",
      value: "EMAIL",
      description: "the user's email address",
      required: true,
    },
    "full-name": { type: "string", value: "NAME", description: "the user's name", required: true },
    role: {
      type: "string",
      value: "ROLE",
      description: "owner, administrator, moderator, member (default) or guest",
    },
    ...PASSWORD_OPTIONS,
    realm: REALM_OPTION,
  },
  async check(values) {
    const role = ROLES[((values.role as string | undefined) ?? "member").toLowerCase()];
    if (role === undefined)
      throw new UsageError(
        `--role ${values.role}: use owner, administrator, moderator, member or guest`,
      );
    const fullName = asUsage("full-name", values["full-name"] as string, () =>
      checkFullName(values["full-name"] as string),
    );
    return {
      email: email(values),
      fullName,
      role,
      password: await passwordFrom(values),
      realm: realmOption(values),
    };
  },
  async run(input, deps) {
    const realm = await organization(deps, input.realm);
    const passwordHash = input.password === null ? null : await hashPassword(input.password);
    const user = await refusalsOf("email", input.email, /^Email /, () =>
      doCreateUserWithDefaultChannels(deps, realm, {
        email: input.email,
        fullName: input.fullName,
        role: input.role,
        passwordHash,
      }),
    );
    const url = await realmUrl(deps.db, realm, deps.config);
    return labelled(
      `Created the user "${user.fullName}" (${roleName(user.role)}) in "${realm.name}".`,
      [
        ["email", user.deliveryEmail],
        ["user id", user.id],
        ["API key", user.apiKey],
        ["password", input.password === null ? "none (log in with the API key)" : "set"],
        ["organization URL", url],
        ...reachHints(url),
      ],
    );
  },
};

export const createChannel: Command<{
  name: string;
  description: string;
  inviteOnly: boolean;
  isDefault: boolean;
  realm: string | undefined;
}> = {
  name: "create-channel",
  summary: "Create a channel, with no subscribers (users subscribe through the API or a client).",
  options: {
    name: {
      type: "string",
      value: "NAME",
      description: "the channel's name (at most 60 characters)",
      required: true,
    },
    description: { type: "string", value: "TEXT", description: "its description (Markdown)" },
    private: { type: "boolean", description: "make it private (invite-only, history protected)" },
    default: {
      type: "boolean",
      description: "make it a default channel: new users are subscribed to it (not with --private)",
    },
    realm: REALM_OPTION,
  },
  check(values) {
    const name = asUsage("name", values.name as string, () =>
      checkChannelName(values.name as string),
    );
    if (values.private && values.default)
      throw new UsageError("--default with --private: a default channel cannot be private.");
    return {
      name,
      description: (values.description as string | undefined) ?? "",
      inviteOnly: values.private === true,
      isDefault: values.default === true,
      realm: realmOption(values),
    };
  },
  async run(input, deps) {
    const realm = await organization(deps, input.realm);
    const stream = await refusalsOf("name", input.name, /^Channel /, () =>
      doCreateChannelWithoutCreator(deps, realm, {
        name: input.name,
        description: input.description,
        inviteOnly: input.inviteOnly,
        isDefaultStream: input.isDefault,
      }),
    );
    return labelled(`Created the channel #${stream.name} in "${realm.name}".`, [
      ["channel id", stream.id],
      ["privacy", stream.inviteOnly ? "private" : "public"],
      ["default channel", input.isDefault ? "yes" : "no"],
    ]);
  },
};

export const populateDb: Command<{ file: string }> = {
  name: "populate-db",
  summary:
    "Create the development organization (Zulip Dev: users, bots, channels, messages) in an empty database.",
  options: {
    credentials: {
      type: "string",
      value: "FILE",
      description: "where to write every user's email, API key and password (JSON)",
      required: true,
    },
    force: {
      type: "boolean",
      description: "replace FILE if it exists (it may hold another database's keys)",
    },
  },
  notes: "The organization's host is the one the server will use: EXTERNAL_HOST, else HOST:PORT.",
  check(values) {
    const file = resolve(values.credentials as string);
    if (!existsSync(dirname(file)) || !statSync(dirname(file)).isDirectory())
      throw new UsageError(
        `--credentials ${values.credentials}: the directory ${dirname(file)} does not exist`,
      );
    if (existsSync(file) && statSync(file).isDirectory())
      throw new UsageError(`--credentials ${values.credentials}: that is a directory`);
    // Another database's keys (the embedded one's, then PostgreSQL's) must not vanish silently.
    if (existsSync(file) && !values.force)
      throw new UsageError(
        `--credentials ${values.credentials}: the file exists (it may hold another database's keys): name another file, or add --force to replace it`,
      );
    return { file };
  },
  async run({ file }, deps) {
    const creds = await populateDevRealm(deps);
    writeFileSync(file, JSON.stringify(creds, null, 2) + "\n", { mode: 0o600 });
    return labelled(
      `Created the organization "${creds.realm.name}" with ${Object.keys(creds.users).length} users.`,
      [
        ["organization URL", `http://${creds.realm.host}`],
        ["credentials", file],
        [
          "try",
          `KEY=$(node -p 'require(${JSON.stringify(file)}).users.hamlet.api_key'); curl -u hamlet@zulip.com:$KEY http://${creds.realm.host}/api/v1/users/me`,
        ],
      ],
    );
  },
};

export const COMMANDS: Command<unknown>[] = [
  createRealm,
  createUserCommand,
  createChannel,
  populateDb,
  populateScaleCommand,
];
