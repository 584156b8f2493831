/**
 * `npm run manage -- <command> [options]`: administration from the command line, on the same
 * DATA_DIR or DATABASE_URL as the server (with the embedded database, stop the server first: one
 * process owns a PGlite data directory at a time). `--help` lists the commands; `<command>
 * --help` its options. Exit codes: 0 done, 1 failed, 2 wrong command line (see manage/cli.ts).
 */
import { configFromEnv, ConfigError } from "../config.ts";
import { JsonableError } from "../errors.ts";
import { commandHelp, parseCommandArgs, PROGRAM, UsageError, type Command } from "./cli.ts";
import { COMMANDS as BASE_COMMANDS } from "./commands.ts";
import { exportCommand, importSlackCommand, importZulipCommand } from "./moving.ts";

const COMMANDS = [
  ...BASE_COMMANDS,
  exportCommand,
  importZulipCommand,
  importSlackCommand,
] as Command<unknown>[];
import { openForCommand } from "./context.ts";

const HELP = [
  "Administration of the chat server, on its database (DATA_DIR or DATABASE_URL).\n",
  `usage: ${PROGRAM} <command> [options]\n`,
  "commands:",
  ...COMMANDS.map((c) => `  ${c.name.padEnd(16)}${c.summary}`),
  "",
  `Run \`${PROGRAM} <command> --help\` for a command's options.`,
].join("\n");

class Failure extends Error {}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    (name === undefined ? process.stderr : process.stdout).write(HELP + "\n");
    return name === undefined ? 2 : 0;
  }
  const command: Command<unknown> | undefined = COMMANDS.find((c) => c.name === name);
  if (!command)
    throw new UsageError(
      `unknown command '${name}' (commands: ${COMMANDS.map((c) => c.name).join(", ")}; see ${PROGRAM} --help)`,
    );
  const { help, values } = parseCommandArgs(command, args);
  if (help) {
    process.stdout.write(commandHelp(command) + "\n");
    return 0;
  }
  const config = configFromEnv();
  const checked = await command.check(values);
  let opened: Awaited<ReturnType<typeof openForCommand>>;
  try {
    opened = await openForCommand(config);
  } catch (err) {
    throw new Failure(`cannot open the database: ${(err as Error).message}`);
  }
  const { deps, database } = opened;
  try {
    const lines = await command.run(checked, deps);
    process.stdout.write(lines.join("\n") + "\n");
    return 0;
  } finally {
    deps.events.close();
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const name = process.argv[2];
    const command = COMMANDS.find((c) => c.name === name);
    if (err instanceof UsageError) {
      process.stderr.write(
        `error: ${err.message}${command ? ` (see ${PROGRAM} ${command.name} --help)` : ""}\n`,
      );
      process.exit(2);
    }
    const message =
      err instanceof JsonableError || err instanceof Failure || err instanceof ConfigError
        ? err.message
        : `${(err as Error)?.message ?? err}`;
    process.stderr.write(`error: ${message}\n`);
    process.exit(1);
  },
);
