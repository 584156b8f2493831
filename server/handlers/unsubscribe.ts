/**
 * `/accounts/unsubscribe/<type>/<token>`, outside the API (Zulip's email_unsubscribe): the link
 * at the foot of a notification email, and its List-Unsubscribe header. GET (the link followed)
 * and POST (a mail client's one-click unsubscribe, RFC 8058) both turn that kind of email off for
 * the user the link was made for, with no login, through the same settings change (and event) as
 * the user's own, and answer with a page saying so.
 */
import { Router, type NextFunction, type Request, type Response } from "express";
import type { AppDeps } from "../context.ts";
import { doChangeSettings } from "../actions/users/user-settings.ts";
import { linkProblemPage, page } from "../http/join-pages.ts";
import { sendPage } from "../http/pages.ts";
import { escapeText } from "../lib/markdown/text.ts";
import {
  UNSUBSCRIBE_NAMES,
  UNSUBSCRIBE_SETTINGS,
  unsubscribeTarget,
} from "../lib/notifications/unsubscribe.ts";

export function unsubscribeRoutes(deps: AppDeps): Router {
  const router = Router();
  async function unsubscribe(req: Request, res: Response, next: NextFunction) {
    try {
      const { type, token } = req.params as { type: string; token: string };
      const target = await unsubscribeTarget(deps.db, type, token);
      if (typeof target === "string") return sendPage(res, linkProblemPage(target));
      const { user, realm } = target;
      await doChangeSettings(
        { ...deps, realm, user, host: req.hostname, userAgent: req.get("user-agent") },
        { settings: new Map([[UNSUBSCRIBE_SETTINGS[target.type], false]]) },
      );
      const name = UNSUBSCRIBE_NAMES[target.type];
      sendPage(
        res,
        page(
          200,
          "Unsubscribed",
          `<h1>Email settings updated</h1>
<p>You've successfully unsubscribed from ${escapeText(name)} emails for ${escapeText(realm.name)}.</p>
<p>You can undo this in your personal settings, under Notifications.</p>`,
        ),
      );
    } catch (err) {
      next(err);
    }
  }
  router.get("/accounts/unsubscribe/:type/:token", unsubscribe);
  router.post("/accounts/unsubscribe/:type/:token", unsubscribe);
  return router;
}
