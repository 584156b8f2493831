/**
 * GET /: the address the start-up log prints. There is no web app here, so the page says what
 * the server is, where the API reference is, and how a client logs in (an API key over HTTP
 * Basic, as every Zulip client does).
 */
import type { Request, Response } from "express";
import { escapeCode } from "../lib/markdown/text.ts";

export function homePage(req: Request, res: Response) {
  // The Host header is the client's own text: escaped, and only ever shown in examples.
  const base = escapeCode(`${req.protocol}://${req.headers.host ?? "127.0.0.1:9991"}`);
  res.type("html").set("Cache-Control", "no-cache").send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Zulip-compatible chat server</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:.75rem;overflow-x:auto}</style>
</head><body>
<h1>Zulip-compatible chat server</h1>
<p>This server speaks Zulip's REST API under <code>/api/v1</code>; it has no web app. Use a Zulip client
(the mobile or terminal apps, <code>python-zulip-api</code>, <code>zulip-js</code>) or plain HTTP.</p>
<p><strong><a href="/api/docs">API reference</a></strong> (the spec itself: <a href="/api/openapi.json">/api/openapi.json</a>).</p>
<h2>Logging in</h2>
<p>Every request is authenticated with HTTP Basic: your email address and your API key.
Get the key with your password:</p>
<pre>curl ${base}/api/v1/fetch_api_key -d username=EMAIL -d password=PASSWORD</pre>
<p>then, for example:</p>
<pre>curl -u EMAIL:API_KEY ${base}/api/v1/users/me</pre>
<p>The server's administrator gets keys without a password: <code>npm run manage -- create-realm</code> and
<code>create-user</code> print the new user's key, and <code>npm run manage -- populate-db --credentials FILE</code>
writes every development user's key and password to FILE.</p>
</body></html>
`);
}
