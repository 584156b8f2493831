/**
 * Zulip's emoji data file (zerver/lib/emoji.py data_url, static/generated/emoji/emoji_api.json):
 * `{"code_to_names": {"1f600": ["grinning", …], …}}`, built from the Markdown renderer's emoji
 * table, the one reactions check against. Its URL names a hash of its content, so a client may
 * cache it for ever and a new table is a new URL.
 */
import { createHash } from "node:crypto";
import { emojiCodeToNames } from "../markdown/emoji.ts";

export interface EmojiDataFile {
  body: string;
  hash: string;
  path: string;
}

let file: EmojiDataFile | undefined;

/** The file's body and versioned path, built on first use (the table itself loads lazily). */
export function emojiDataFile(): EmojiDataFile {
  if (file) return file;
  const body = JSON.stringify({ code_to_names: Object.fromEntries(emojiCodeToNames()) });
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
  file = { body, hash, path: `/static/generated/emoji/emoji_api.${hash}.json` };
  return file;
}
