/**
 * The login pages' HTML (Zulip's templates/zerver/login.html, with its texts), in the sign-up
 * pages' style: small, server-rendered, no script. Every value from a user or the database is
 * escaped here, and nowhere else.
 */
import { escapeAttr, escapeText } from "../lib/markdown/text.ts";
import { STYLE, type Page } from "./join-pages.ts";

export type { Page };

/** Django's AuthenticationForm error, as Zulip's login form shows it. */
export const WRONG_CREDENTIALS =
  "Please enter a correct email and password. Note that both fields may be case-sensitive.";

function page(status: number, title: string, body: string): Page {
  return {
    status,
    html: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeText(title)}</title><link rel="icon" href="/static/favicon.svg" type="image/svg+xml"><style>${STYLE}.small{font-size:.85rem;margin-top:2rem}</style></head>
<body>
${body}
</body></html>
`,
  };
}

/** login.html: the email and password form; `error` above it, the email kept. */
export function loginPage(input: {
  realmName: string;
  csrfToken: string;
  next: string;
  email?: string;
  error?: string;
  status?: number;
}): Page {
  const error = input.error
    ? `<p class="error" id="login-error" role="alert">${escapeText(input.error)}</p>\n`
    : "";
  return page(
    input.status ?? 200,
    `Log in | ${input.realmName}`,
    `<h1>${escapeText(input.realmName)}</h1>
${error}<form method="post" action="/accounts/login/" id="login_form">
<input type="hidden" name="csrfmiddlewaretoken" value="${escapeAttr(input.csrfToken)}">
<input type="hidden" name="next" value="${escapeAttr(input.next)}">
<label for="id_username">Email</label>
<input type="email" id="id_username" name="username" value="${escapeAttr(input.email ?? "")}" maxlength="320" autocomplete="username" required autofocus>
<label for="id_password">Password</label>
<input type="password" id="id_password" name="password" maxlength="100" autocomplete="current-password" required>
<button type="submit" id="login_button">Log in</button>
</form>
<p class="small"><a href="/api/docs">API reference</a></p>`,
  );
}

/** Too many failed attempts for this email (Zulip's rate_limit_auth answer, as a page). */
export function rateLimitedPage(input: {
  realmName: string;
  csrfToken: string;
  next: string;
  email: string;
  seconds: number;
}): Page {
  return loginPage({
    ...input,
    status: 429,
    error: `You're making too many attempts to sign in. Try again in ${input.seconds} seconds or contact your organization administrator for help.`,
  });
}

/** The web app is not built (no web/dist/manifest.json). */
export function notBuiltPage(): Page {
  return page(
    503,
    "Web app not built",
    "<h1>The web app is not built: run npm run build</h1>\n<p>The API works meanwhile: see the <a href=\"/api/docs\">API reference</a>.</p>",
  );
}

/** The app shell: the organization, the session's CSRF token, and the build's assets. */
export function appShell(input: {
  realmName: string;
  csrfToken: string;
  entry: string;
  css: string[];
  preload: string[];
}): string {
  const a = escapeAttr;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeText(input.realmName)}</title>` +
    `<meta name="csrf-token" content="${a(input.csrfToken)}">` +
    `<meta name="realm-name" content="${a(input.realmName)}">` +
    `<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">` +
    input.css.map((href) => `<link rel="stylesheet" href="${a(href)}">`).join("") +
    input.preload.map((href) => `<link rel="modulepreload" href="${a(href)}">`).join("") +
    `<script type="module" src="${a(input.entry)}"></script>` +
    `</head><body><div id="app"></div></body></html>`
  );
}
