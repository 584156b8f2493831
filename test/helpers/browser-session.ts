/**
 * A browser's side of the web session, by hand: a cookie jar over fetch (redirects not followed),
 * logging in through the login form, and the typed client as the web app makes it
 * (`createZulipClient({ baseUrl, csrfToken })`, the jar's cookies added by a custom fetch).
 */
import { createZulipClient, type ZulipClient } from "../../client/src/index.ts";
import { specCheckMiddleware } from "./spec-check.ts";

export class CookieJar {
  readonly cookies = new Map<string, string>();
  /** Every Set-Cookie line received, as sent. */
  readonly setCookies: string[] = [];
  constructor(readonly baseUrl: string) {}

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size && !headers.has("Cookie")) headers.set("Cookie", this.header());
    const res = await fetch(this.baseUrl + path, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      this.setCookies.push(line);
      const pair = line.split(";")[0]!;
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      if (/;\s*Max-Age=0\b/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1));
    }
    return res;
  }

  /** The login form's hidden CSRF field, from GET /login/. */
  async loginToken(): Promise<string> {
    const html = await (await this.fetch("/login/")).text();
    return /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(html)![1]!;
  }

  /** POST /accounts/login/ with the form's fields; the answer as sent (302 on success). */
  async login(username: string, password: string, next?: string): Promise<Response> {
    const token = await this.loginToken();
    const body = new URLSearchParams({ csrfmiddlewaretoken: token, username, password });
    if (next !== undefined) body.set("next", next);
    return this.fetch("/accounts/login/", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body,
    });
  }

  /** The app page's CSRF token (`<meta name="csrf-token">`). */
  async csrfToken(): Promise<string> {
    const html = await (await this.fetch("/")).text();
    const token = /<meta name="csrf-token" content="([^"]+)">/.exec(html)?.[1];
    if (!token) throw new Error(`no csrf-token in the page: ${html.slice(0, 300)}`);
    return token;
  }

  /** The typed client as the web app makes it, sending this jar's cookies. */
  client(csrfToken: string): ZulipClient {
    return createZulipClient({
      baseUrl: this.baseUrl,
      csrfToken,
      fetch: (input, init) => {
        const request = new Request(input, init);
        request.headers.set("Cookie", this.header());
        return fetch(request);
      },
      middleware: [specCheckMiddleware],
    });
  }
}
