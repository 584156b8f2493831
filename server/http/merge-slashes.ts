/**
 * nginx's `merge_slashes` (on by default, in front of every Zulip server): repeated slashes in
 * a request's path are one, so `/api/v1//user_topics` (as Zulip's mobile app sends it) reaches
 * `/api/v1/user_topics`. The query string is left as it is.
 */
import type { NextFunction, Request, Response } from "express";

const REPEATED_SLASHES = /\/{2,}/g;

export function mergeSlashes(req: Request, _res: Response, next: NextFunction) {
  const query = req.url.indexOf("?");
  const path = query < 0 ? req.url : req.url.slice(0, query);
  if (path.includes("//"))
    req.url = req.originalUrl =
      path.replace(REPEATED_SLASHES, "/") + (query < 0 ? "" : req.url.slice(query));
  next();
}
