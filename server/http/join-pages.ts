/**
 * The sign-up pages' HTML (Zulip's templates/zerver/register.html, accounts_home.html,
 * accounts_send_confirm.html and templates/confirmation/*.html, with their texts): small,
 * server-rendered, no script, so they work without JavaScript. Every value from a user or the
 * database is escaped here, and nowhere else.
 */
import { escapeAttr, escapeText } from "../lib/markdown/text.ts";

export const STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem}" +
  "label{display:block;margin-top:1rem;font-weight:600}input[type=text],input[type=email],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}" +
  ".error{color:#b00020}.field-error{color:#b00020;font-size:.9rem}.hint{color:#555;font-size:.85rem;margin-top:.25rem}button{margin-top:1.25rem;padding:.5rem 1.25rem}" +
  "pre,code{background:#f4f4f4}pre{padding:.75rem;overflow-x:auto}";

export interface Page {
  status: number;
  html: string;
}

export function page(status: number, title: string, body: string): Page {
  return {
    status,
    html: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeText(title)} | Zulip</title><style>${STYLE}</style></head>
<body>
${body}
</body></html>
`,
  };
}

/** confirmation/link_malformed.html, link_does_not_exist.html and link_expired.html (404, as Zulip). */
export function linkProblemPage(problem: "malformed" | "missing" | "expired"): Page {
  if (problem === "malformed")
    return page(
      404,
      "Confirmation link malformed",
      `<h1>Whoops. The confirmation link is malformed.</h1>
<p>Make sure you copied the link correctly in to your browser. If you're still encountering this page, it's probably our fault. We're sorry.</p>`,
    );
  if (problem === "missing")
    return page(
      404,
      "Confirmation link does not exist",
      `<h1>Whoops. We couldn't find your confirmation link in the system.</h1>
<p>Please contact your organization administrator for a new link.</p>`,
    );
  return page(
    404,
    "Confirmation link expired or deactivated",
    `<h1>Whoops. The confirmation link has expired or been deactivated.</h1>
<p>Please contact your organization administrator for a new link.</p>`,
  );
}

/** No organization on this host (a server not set up yet, or an unknown subdomain). */
export function noOrganizationPage(): Page {
  return page(
    404,
    "Organization does not exist",
    "<h1>There is no Zulip organization at this URL.</h1>",
  );
}

/** A cross-site form submission (Django's CSRF failure page, 403). */
export function forbiddenPage(): Page {
  return page(
    403,
    "Forbidden",
    "<h1>Forbidden (403)</h1>\n<p>CSRF verification failed. Request aborted.</p>",
  );
}

/** Anything unexpected: a plain page, never a stack trace. */
export function errorPage(status: number): Page {
  return status === 413
    ? page(413, "Request too large", "<h1>The form you sent is too large.</h1>")
    : status < 500
      ? page(400, "Bad request", "<h1>The form you sent could not be read.</h1>")
      : page(
          500,
          "Internal server error",
          "<h1>Something went wrong.</h1>\n<p>Please try again in a moment; if it keeps happening, contact your organization administrator.</p>",
        );
}

export type FieldErrors = Partial<Record<"full_name" | "password" | "terms" | "email", string>>;

const fieldError = (errors: FieldErrors, field: keyof FieldErrors) =>
  errors[field]
    ? `\n<div class="field-error" id="${field}-error">${escapeText(errors[field])}</div>`
    : "";

const formError = (error: string | undefined) =>
  error ? `<p class="error" id="form-error" role="alert">${escapeText(error)}</p>\n` : "";

/** The account form of an invitation or a confirmed address (register.html). */
export function registerPage(input: {
  realmName: string;
  email: string;
  fullName: string;
  termsUrl: string | undefined;
  /** What a password needs (passwordRuleText), shown under the field. */
  passwordRule: string;
  errors?: FieldErrors;
  error?: string;
}): Page {
  const errors = input.errors ?? {};
  const terms = input.termsUrl
    ? `<label><input type="checkbox" name="terms" id="terms" required> I agree to the <a href="${escapeAttr(input.termsUrl)}" target="_blank" rel="noopener">Terms of Service</a>.</label>${fieldError(errors, "terms")}\n`
    : "";
  return page(
    200,
    "Create your account",
    `<h1>Create your account</h1>
<p>You're joining <strong>${escapeText(input.realmName)}</strong> as <strong id="email">${escapeText(input.email)}</strong>.</p>
${formError(input.error)}<form method="post" id="registration">
<label for="full_name">Name</label>
<input type="text" id="full_name" name="full_name" value="${escapeAttr(input.fullName)}" maxlength="100" autocomplete="name" required>${fieldError(errors, "full_name")}
<label for="password">Password</label>
<input type="password" id="password" name="password" maxlength="100" autocomplete="new-password" aria-describedby="password-rule" required>
<div class="hint" id="password-rule">${escapeText(input.passwordRule)}</div>${fieldError(errors, "password")}
${terms}<button type="submit" id="submit">Sign up</button>
</form>`,
  );
}

/** The address form of an invitation link anyone may use (accounts_home.html). */
export function addressPage(input: {
  realmName: string;
  email: string;
  errors?: FieldErrors;
  error?: string;
}): Page {
  const errors = input.errors ?? {};
  return page(
    200,
    "Sign up",
    `<h1>Sign up for ${escapeText(input.realmName)}</h1>
${formError(input.error)}<form method="post" id="send_confirm">
<label for="email">Email</label>
<input type="email" id="email" name="email" value="${escapeAttr(input.email)}" maxlength="320" autocomplete="email" required>${fieldError(errors, "email")}
<button type="submit" id="submit">Sign up</button>
</form>`,
  );
}

/** accounts_send_confirm.html: the confirmation email is on its way. */
export function checkEmailPage(email: string): Page {
  return page(
    200,
    "Check your email",
    `<h1>Check your email so we can get started.</h1>
<p>We just sent a confirmation email to <strong id="email">${escapeText(email)}</strong>. Click the link in the email to finish creating your account.</p>`,
  );
}

/**
 * The new account: its API email and key, and a zuliprc to download (python-zulip-api's format),
 * so a client can log in at once. Shown once, in the answer to the form: the link is used now,
 * so opening it again shows the "expired" page, and the answer is never cached.
 */
export function welcomePage(input: {
  realmName: string;
  email: string;
  apiKey: string;
  site: string;
}): Page {
  const zuliprc = `[api]\nemail=${input.email}\nkey=${input.apiKey}\nsite=${input.site}\n`;
  return page(
    200,
    "Welcome",
    `<h1>Welcome to ${escapeText(input.realmName)}!</h1>
<p>Your account is ready. A Zulip client logs in with your email address and this API key (keep it secret: it works like a password):</p>
<dl>
<dt>Email</dt><dd><code id="api-email">${escapeText(input.email)}</code></dd>
<dt>API key</dt><dd><code id="api-key">${escapeText(input.apiKey)}</code></dd>
<dt>Server</dt><dd><code id="site">${escapeText(input.site)}</code></dd>
</dl>
<p><a id="zuliprc" download="zuliprc" href="data:text/plain;charset=utf-8,${escapeAttr(encodeURIComponent(zuliprc))}">Download zuliprc</a> (save it as <code>~/.zuliprc</code>):</p>
<pre id="zuliprc-text">${escapeText(zuliprc)}</pre>
<p>This page is shown only once. You can get a key again later with your password: <code>POST /api/v1/fetch_api_key</code>.</p>`,
  );
}
