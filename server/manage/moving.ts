/**
 * Moving an organization in and out (Zulip's `export` and `import` management commands):
 * `export` writes one organization in Zulip's export format (lib/export/export-realm.ts),
 * `import-zulip PATH` makes a new organization from such an export (actions/realm/import-zulip.ts),
 * and `import-slack PATH` from a Slack export, converted to Zulip's format first (lib/export/slack.ts).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { doImportZulip } from "../actions/realm/import-zulip.ts";
import { unpackArchive } from "../lib/export/archive.ts";
import { exportRealm } from "../lib/export/export-realm.ts";
import { convertSlackExport, SlackExportError, type SlackConversion } from "../lib/export/slack.ts";
import { JsonableError } from "../errors.ts";
import { realmUrl, subdomainProblem } from "../lib/realm/realm.ts";
import { uploadStorage } from "../lib/uploads/upload-storage.ts";
import type { FileKind } from "../lib/export/zulip-format.ts";
import { labelled, UsageError, type Command } from "./cli.ts";
import { organization, realmOption } from "./commands.ts";

/** Files the store lacks listed by name after an export; beyond that, only their number. */
const MISSING_LISTED = 20;

export const exportCommand: Command<{ realm?: string; output: string }> = {
  name: "export",
  summary: "Export an organization in Zulip's export format (a .tar.gz another server imports).",
  options: {
    realm: {
      type: "string",
      value: "ID",
      description: "the organization's id (subdomain); by default the first one created",
    },
    output: {
      type: "string",
      value: "DIR",
      description: "the directory the .tar.gz is written to (default: the current directory)",
    },
  },
  notes:
    "The export holds every user's password hash and API key, and every uploaded file: keep it as you keep the database.",
  check(values) {
    const output = resolve((values.output as string | undefined) ?? ".");
    if (!existsSync(output) || !statSync(output).isDirectory())
      throw new UsageError(`--output ${values.output as string}: not a directory`);
    return { realm: realmOption(values), output };
  },
  async run({ realm: stringId, output }, deps) {
    const realm = await organization(deps, stringId);
    const started = Date.now();
    const stamp = new Date().toISOString().replace(/[-:]|\.\d+/g, "");
    const name = `zulip-export-${realm.stringId || "root"}-${stamp}`;
    const result = await exportRealm(
      deps.db,
      realm.id,
      output,
      name,
      await uploadStorage(deps.config),
    );
    return [
      ...labelled(`Exported "${realm.name}".`, [
        ["file", result.tarball],
        ["messages", result.messages],
        ["files", fileCounts(result.stored)],
        ["seconds", ((Date.now() - started) / 1000).toFixed(1)],
      ]),
      // An organization's file the store has lost is left out (with its attachment), not fatal.
      ...(result.missing.length
        ? [
            `not in the upload store (left out): ${result.missing.length}`,
            ...result.missing.slice(0, MISSING_LISTED).map((p) => `  ${p}`),
            ...(result.missing.length > MISSING_LISTED
              ? [`  … and ${result.missing.length - MISSING_LISTED} more`]
              : []),
          ]
        : []),
    ];
  },
};

export const importZulipCommand: Command<{ path: string; subdomain?: string }> = {
  name: "import-zulip",
  summary: "Import a Zulip organization export (.tar.gz, or its directory) as a new organization.",
  positional: { name: "path", description: "the export: a .tar.gz or the directory it unpacks to" },
  options: {
    subdomain: {
      type: "string",
      value: "ID",
      description: "the new organization's subdomain (default: the export's)",
    },
  },
  notes:
    "The organization must not exist yet. The import is one transaction: a refusal or a crash leaves nothing behind, so it can be run again.",
  check(values) {
    const path = resolve(values.path as string);
    if (!existsSync(path))
      throw new UsageError(`${values.path as string}: no such file or directory`);
    return { path, subdomain: values.subdomain as string | undefined };
  },
  async run({ path, subdomain }, deps) {
    const started = Date.now();
    let dir = path;
    let unpacked: string | undefined;
    if (!statSync(path).isDirectory()) {
      unpacked = mkdtempSync(join(os.tmpdir(), "zulip-import-"));
      try {
        await unpackArchive(path, unpacked);
      } catch (err) {
        rmSync(unpacked, { recursive: true, force: true });
        throw new UsageError(`${path}: not a readable archive (${(err as Error).message})`);
      }
      dir = unpacked;
    }
    try {
      const result = await doImportZulip(deps, dir, { subdomain });
      const realm = await deps.db.realm.findUniqueOrThrow({ where: { id: result.realmId } });
      return labelled(`Imported "${realm.name}".`, [
        ["organization URL", await realmUrl(deps.db, realm, deps.config)],
        ["users", result.users],
        ["channels", result.channels],
        ["messages", result.messages],
        ["files", fileCounts(result.files)],
        ["seconds", ((Date.now() - started) / 1000).toFixed(1)],
      ]);
    } finally {
      if (unpacked) rmSync(unpacked, { recursive: true, force: true });
    }
  },
};

/** `3 uploads, 2 avatars, 1 custom emoji, 0 icons and logos`. */
function fileCounts(counts: Record<FileKind, number>): string {
  return `${counts.uploads} uploads, ${counts.avatars} avatars, ${counts.emoji} custom emoji, ${counts.realmIcons} icons and logos`;
}

export const importSlackCommand: Command<{
  path: string;
  subdomain: string;
  name: string;
  token?: string;
}> = {
  name: "import-slack",
  summary: "Import a Slack workspace export (.zip, or its directory) as a new organization.",
  positional: {
    name: "path",
    description: "Slack's export: the .zip or the directory it unpacks to",
  },
  options: {
    subdomain: {
      type: "string",
      value: "ID",
      description: "the new organization's subdomain",
      required: true,
    },
    name: {
      type: "string",
      value: "NAME",
      description: "the new organization's name (default: the subdomain)",
    },
    token: {
      type: "string",
      value: "TOKEN",
      description:
        "the workspace's Slack token (xoxb-… or xoxp-…): messages' files are downloaded with it",
    },
  },
  notes:
    "Mapped as Zulip's Slack importer maps it; what could not be mapped is listed. Slack's export holds no files: with --token each message's file is downloaded from Slack and becomes an upload, without it (or when a download fails) it stays linked to Slack. The import is one transaction: a refusal or a crash leaves nothing behind.",
  check(values) {
    const path = resolve(values.path as string);
    if (!existsSync(path))
      throw new UsageError(`${values.path as string}: no such file or directory`);
    const subdomain = values.subdomain as string;
    const problem = subdomainProblem(subdomain);
    if (problem) throw new UsageError(`--subdomain ${subdomain}: ${problem}`);
    const token = values.token as string | undefined;
    if (token !== undefined && !/^xox[bp]-\S+$/.test(token))
      throw new UsageError("--token: a Slack token starts with xoxb- or xoxp-");
    return { path, subdomain, name: (values.name as string | undefined) ?? subdomain, token };
  },
  async run({ path, subdomain, name, token }, deps) {
    const started = Date.now();
    const work = mkdtempSync(join(os.tmpdir(), "slack-import-"));
    try {
      let dir = path;
      if (!statSync(path).isDirectory()) {
        dir = join(work, "slack");
        try {
          await unpackArchive(path, dir);
        } catch (err) {
          throw new UsageError(`${path}: not a readable archive (${(err as Error).message})`);
        }
      }
      const converted = join(work, "zulip");
      let report: SlackConversion;
      try {
        report = await convertSlackExport(dir, converted, {
          name,
          stringId: subdomain,
          fakeEmailDomain: deps.config.fakeEmailDomain || deps.config.externalHost,
          token,
        });
      } catch (err) {
        if (err instanceof SlackExportError) throw new JsonableError(err.message);
        throw err;
      }
      const result = await doImportZulip(deps, converted, { subdomain });
      const realm = await deps.db.realm.findUniqueOrThrow({ where: { id: result.realmId } });
      return [
        ...labelled(`Imported "${realm.name}" from Slack.`, [
          ["organization URL", await realmUrl(deps.db, realm, deps.config)],
          ["users", report.users],
          ["channels", report.channels],
          ["messages", report.messages],
          ["files", result.files.uploads],
          ["seconds", ((Date.now() - started) / 1000).toFixed(1)],
        ]),
        ...(report.unmapped.length
          ? ["not mapped:", ...report.unmapped.map((line) => `  ${line}`)]
          : []),
      ];
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
};
