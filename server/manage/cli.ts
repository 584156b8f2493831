/**
 * The admin CLI's plumbing: commands declare their options, the arguments are parsed strictly
 * (node:util parseArgs) and checked before any database is opened, and every failure is one line
 * on stderr with an exit code a script can test: 0 done, 1 the command failed (a duplicate, a
 * database that cannot be opened), 2 the command line is wrong (unknown command or option,
 * missing or invalid value).
 */
import { isIP } from "node:net";
import { parseArgs } from "node:util";
import type { AppDeps } from "../context.ts";
import { JsonableError } from "../errors.ts";
import { passwordProblem } from "../lib/auth/passwords.ts";

/** A mistake in the command line: exit code 2. */
export class UsageError extends Error {}

export interface OptionSpec {
  type: "string" | "boolean";
  description: string;
  /** Shown in the usage line: `--name NAME`. */
  value?: string;
  required?: boolean;
}

export type Values = Record<string, string | boolean | undefined>;

export interface Command<Checked> {
  name: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** One required argument before or after the options (`import-zulip PATH`): its value is values[name]. */
  positional?: { name: string; description: string };
  /** More help text after the options. */
  notes?: string;
  /** Validates the options (reading standard input if asked) before the database opens. */
  check(values: Values): Promise<Checked> | Checked;
  /** Runs against the database; returns the lines to print. */
  run(checked: Checked, deps: AppDeps): Promise<string[]>;
}

export const PROGRAM = "npm run manage --";

export function usageLine(command: Command<unknown>): string {
  const parts = Object.entries(command.options).map(([name, o]) => {
    const text = o.type === "string" ? `--${name} ${o.value ?? "VALUE"}` : `--${name}`;
    return o.required ? text : `[${text}]`;
  });
  if (command.positional) parts.unshift(command.positional.name.toUpperCase());
  return `${PROGRAM} ${command.name} ${parts.join(" ")}`.trimEnd();
}

export function commandHelp(command: Command<unknown>): string {
  const width =
    Math.max(
      ...Object.entries(command.options).map(
        ([n, o]) => n.length + (o.type === "string" ? (o.value ?? "VALUE").length + 1 : 0),
      ),
      4,
    ) + 4;
  const rows = Object.entries(command.options).map(([name, o]) => {
    const left = o.type === "string" ? `${name} ${o.value ?? "VALUE"}` : name;
    return `  --${left.padEnd(width)}${o.description}${o.required ? " (required)" : ""}`;
  });
  rows.push(`  --${"help".padEnd(width)}this help`);
  return [
    `${command.summary}\n`,
    `usage: ${usageLine(command)}\n`,
    ...(command.positional
      ? [`  ${command.positional.name.toUpperCase()}: ${command.positional.description}\n`]
      : []),
    "options:",
    ...rows,
    ...(command.notes ? ["", command.notes] : []),
  ].join("\n");
}

/** Parses a command's arguments; every mistake is a UsageError naming it. */
export function parseCommandArgs(
  command: Command<unknown>,
  args: string[],
): { help: boolean; values: Values } {
  const options = Object.fromEntries(
    Object.entries(command.options).map(([name, o]) => [name, { type: o.type }]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: command.positional !== undefined,
    });
  } catch (err) {
    const e = err as Error & { code?: string };
    const quoted = /'([^']+)'/.exec(e.message)?.[1];
    if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION")
      throw new UsageError(`unknown option ${quoted ?? ""} for ${command.name}`);
    if (e.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL")
      throw new UsageError(
        `unexpected argument '${quoted ?? ""}' for ${command.name}: options are written --option VALUE`,
      );
    if (e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
      const option = /--[a-z-]+/.exec(e.message)?.[0];
      throw new UsageError(
        option && /argument missing/.test(e.message)
          ? `${option} needs a value`
          : e.message.split("\n")[0]!,
      );
    }
    throw new UsageError(e.message.split("\n")[0]);
  }
  const values = parsed.values as Values;
  if (values.help) return { help: true, values };
  if (command.positional) {
    const { name } = command.positional;
    if (parsed.positionals.length === 0)
      throw new UsageError(`${command.name} needs ${name.toUpperCase()}`);
    if (parsed.positionals.length > 1)
      throw new UsageError(
        `unexpected argument '${parsed.positionals[1]}' for ${command.name}: it takes one ${name.toUpperCase()}`,
      );
    values[name] = parsed.positionals[0];
  }
  for (const [name, o] of Object.entries(command.options)) {
    if (o.required && (values[name] === undefined || values[name] === ""))
      throw new UsageError(`${command.name} needs --${name}`);
  }
  return { help: false, values };
}

/**
 * An option as messages name it: `--email a@b`, `--name "  "` (quoted when its spaces would
 * not show), or `--password` alone when the value is not to be shown.
 */
export function optionText(option: string, value?: string): string {
  if (value === undefined) return `--${option}`;
  return `--${option} ${value === "" || value.trim() !== value ? JSON.stringify(value) : value}`;
}

/** Runs a check that throws JsonableError (the API's validators) as a usage error naming the option. */
export function asUsage<T>(option: string, value: string | undefined, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof JsonableError)
      throw new UsageError(`${optionText(option, value)}: ${err.message}`);
    throw err;
  }
}

/**
 * Runs an action, naming the option in the refusals that concern it (`--email X: Email 'X'
 * already in use`); other failures pass unchanged.
 */
export async function refusalsOf<T>(
  option: string,
  value: string,
  concerns: RegExp,
  action: () => Promise<T>,
): Promise<T> {
  try {
    return await action();
  } catch (err) {
    if (err instanceof JsonableError && concerns.test(err.message))
      throw new JsonableError(`${optionText(option, value)}: ${err.message}`);
    throw err;
  }
}

export const PASSWORD_OPTIONS: Record<string, OptionSpec> = {
  password: {
    type: "string",
    value: "PASSWORD",
    description:
      "the password (visible to other local users in the process list: prefer the next two)",
  },
  "password-env": {
    type: "string",
    value: "VARIABLE",
    description: "read the password from this environment variable",
  },
  "password-stdin": {
    type: "boolean",
    description: "read the password from standard input (its first line)",
  },
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The password from whichever of the password options was given (at most one), checked; null if none. */
export async function passwordFrom(values: Values): Promise<string | null> {
  const given = ["password", "password-env", "password-stdin"].filter(
    (k) => values[k] !== undefined && values[k] !== false,
  );
  if (given.length > 1)
    throw new UsageError(
      `give the password one way only, not with ${given.map((k) => `--${k}`).join(" and ")}`,
    );
  let password: string | null = null;
  const from =
    given[0] === "password-env"
      ? optionText("password-env", values["password-env"] as string)
      : optionText(given[0] ?? "password");
  if (values.password !== undefined) password = values.password as string;
  else if (values["password-env"] !== undefined) {
    const variable = values["password-env"] as string;
    password = process.env[variable] ?? null;
    if (password === null)
      throw new UsageError(
        `--password-env ${variable}: the environment variable ${variable} is not set`,
      );
  } else if (values["password-stdin"]) {
    if (process.stdin.isTTY) process.stderr.write("Password (then Enter and Ctrl-D): ");
    password = (await readStdin()).split(/\r?\n/)[0]!;
  }
  if (password === null) return null;
  const problem = passwordProblem(password);
  if (problem) throw new UsageError(`${from}: ${problem}`);
  return password;
}

/** Aligned `label: value` lines, so that a person and a script can both read the output. */
export function labelled(title: string, rows: [label: string, value: string | number][]): string[] {
  const width = Math.max(...rows.map(([l]) => l.length)) + 1;
  return [title, ...rows.map(([label, value]) => `  ${(label + ":").padEnd(width)} ${value}`)];
}

/**
 * How to reach an organization whose URL names no real host: a subdomain of an IP address
 * (`http://beta.127.0.0.1:9991`, what a server without EXTERNAL_HOST makes) resolves nowhere,
 * and one of `localhost` only where `*.localhost` resolves (browsers, curl). The server tells
 * organizations apart by the Host header's first label, so a browser can use
 * `beta.localhost` for a server on loopback, and curl can name the Host itself. The URL itself
 * (the API's realm_url) stays what it is.
 */
export function reachHints(url: string): [label: string, value: string][] {
  // Not `new URL`: a host whose last label is a number must be an IPv4 address to it.
  const host = url.replace(/^https?:\/\//, "").replace(/\/.*$/, "");
  const colon = host.lastIndexOf(":");
  const hostname = colon > host.lastIndexOf("]") && colon >= 0 ? host.slice(0, colon) : host;
  const port = hostname === host ? "" : host.slice(colon + 1);
  const dot = hostname.indexOf(".");
  if (dot < 0) return [];
  const label = hostname.slice(0, dot);
  const parent = hostname.slice(dot + 1);
  if (parent !== "localhost" && isIP(parent) === 0) return [];
  const withPort = (h: string) => (port ? `${h}:${port}` : h);
  // beta.localhost is already a name browsers resolve; beta.127.0.0.1 has one there.
  const loopback = parent.startsWith("127.");
  return [
    ...(loopback
      ? [["in a browser", `http://${withPort(`${label}.localhost`)}`] as [string, string]]
      : []),
    ["with curl", `curl -H 'Host: ${host}' http://${withPort(parent)}/api/v1/server_settings`],
  ];
}
