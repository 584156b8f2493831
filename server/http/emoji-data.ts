/**
 * `GET /static/generated/emoji/emoji_api.<hash>.json`: the emoji data file register's
 * `server_emoji_data_url` names. A static file, as Zulip serves it: no credentials, cached for a
 * year (the hash in its name changes with its content), any origin may read it.
 */
import { Router } from "express";
import { emojiDataFile } from "../lib/realm/emoji-data.ts";

const YEAR = "public, max-age=31536000, immutable";

export function emojiDataRoutes() {
  const router = Router();
  router.get(/^\/static\/generated\/emoji\/emoji_api\.([0-9a-f]+)\.json$/, (req, res, next) => {
    const file = emojiDataFile();
    // An older hash is a file this server no longer has: the /static 404 answers it.
    if ((req.params as Record<string, string>)[0] !== file.hash) return next();
    const etag = `"${file.hash}"`;
    res.set({
      "Cache-Control": YEAR,
      ETag: etag,
      "Access-Control-Allow-Origin": "*",
      "X-Content-Type-Options": "nosniff",
    });
    if (req.headers["if-none-match"] === etag) return res.status(304).end();
    res.type("application/json").send(file.body);
  });
  return router;
}
