/**
 * The web app at `/` (built by web/build.mjs into `config.webDistDir`) and its files:
 *
 * - `GET /`: with a live session, the app shell built from `manifest.json` (`entry`, `css`,
 *   `preload`), read at the first request and again whenever the file changes (a new build);
 *   the session's CSRF token is in `<meta name="csrf-token">`. Without a session, 302 to
 *   `/login/` (Zulip's desktop app tells a logged-out page by its URL ending in `/login/`).
 *   No manifest: a 503 page saying to build it.
 * - `GET /static/web/…`: the build's hashed assets, cached for a year (immutable).
 * - `GET /static/…`: `web/public/` (favicon, images), cached briefly; `/favicon.ico` is the SVG favicon.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import express, { Router, type Request, type Response } from "express";
import type { AppDeps } from "../context.ts";
import { appShell, notBuiltPage } from "./login-pages.ts";
import { currentSession, PAGE_SECURITY_HEADERS, sendPage } from "./pages.ts";

interface Manifest {
  entry: string;
  css: string[];
  preload: string[];
}

/** manifest.json, re-read when its modification time or size changes; null while it is missing or unreadable. */
function manifestReader(path: string) {
  let known: { stamp: string; manifest: Manifest | null } | undefined;
  return (): Manifest | null => {
    let stamp: string;
    try {
      const s = statSync(path);
      stamp = `${s.mtimeMs}:${s.size}`;
    } catch {
      known = undefined;
      return null;
    }
    if (known?.stamp === stamp) return known.manifest;
    let manifest: Manifest | null = null;
    try {
      const raw = JSON.parse(readFileSync(path, "utf8")) as Partial<Manifest>;
      const strings = (v: unknown) =>
        Array.isArray(v) && v.every((x) => typeof x === "string") ? v : [];
      if (typeof raw.entry === "string")
        manifest = { entry: raw.entry, css: strings(raw.css), preload: strings(raw.preload) };
    } catch {
      manifest = null;
    }
    known = { stamp, manifest };
    return manifest;
  };
}

const YEAR = "public, max-age=31536000, immutable";
const SHORT = "public, max-age=300";

export function webAppRoutes(deps: AppDeps) {
  const router = Router();
  const manifest = manifestReader(join(deps.config.webDistDir, "manifest.json"));

  router.get("/", async (req: Request, res: Response) => {
    const session = await currentSession(deps, req);
    if (!session) return res.set("Cache-Control", "no-store").redirect(302, "/login/");
    const built = manifest();
    if (!built) return sendPage(res, notBuiltPage());
    sendPage(res, {
      status: 200,
      html: appShell({
        realmName: session.realm.name,
        csrfToken: session.csrfToken,
        ...built,
      }),
    });
  });

  const files = (root: string, cacheControl: string) =>
    express.static(root, {
      index: false,
      redirect: false,
      dotfiles: "ignore",
      etag: false,
      lastModified: true,
      setHeaders: (res) =>
        res.set({ "Cache-Control": cacheControl, "X-Content-Type-Options": "nosniff" }),
    });
  router.use("/static/web", files(join(deps.config.webDistDir, "assets"), YEAR));
  router.use("/static", files(deps.config.webPublicDir, SHORT));
  router.get("/favicon.ico", (_req: Request, res: Response) => {
    res.sendFile(
      join(deps.config.webPublicDir, "favicon.svg"),
      { headers: { "Cache-Control": SHORT, "Content-Type": "image/svg+xml" } },
      (err) => {
        if (err && !res.headersSent) res.status(404).type("text/plain").send("Not found\n");
      },
    );
  });
  // Anything else under /static: a plain 404 (no directory listing, no API envelope).
  router.use("/static", (_req: Request, res: Response) => {
    res.status(404).set(PAGE_SECURITY_HEADERS).type("text/plain").send("Not found\n");
  });
  return router;
}
