/**
 * Email addresses as Zulip accepts them: Django's EmailValidator (zerver/lib/email_validation.py
 * validate_email uses it), a dot-atom or quoted local part and a domain of dotted labels with a
 * TLD of letters or digits, `localhost`, or a bracketed IP literal; 320 characters at most.
 */
import { createRequire } from "node:module";
import type { Db, Realm } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";

const DOT_ATOM = /^[-!#$%&'*+/=?^_`{}|~0-9A-Z]+(\.[-!#$%&'*+/=?^_`{}|~0-9A-Z]+)*$/i;
const QUOTED = /^"([\x01-\x08\x0b\x0c\x0e-\x1f!#-[\]-\x7f]|\\[\x01-\x09\x0b\x0c\x0e-\x7f])*"$/i;
const DOMAIN =
  /^((?:[A-Z0-9\u00a1-\uffff](?:[A-Z0-9\u00a1-\uffff-]{0,61}[A-Z0-9\u00a1-\uffff])?\.)+)(?:[A-Z0-9\u00a1-\uffff-]{2,63})$/i;
const LITERAL = /^\[([0-9.]+|IPv6:[0-9a-f:.]+)\]$/i;

export const INVALID_EMAIL = "Enter a valid email address.";

export function isValidEmail(value: string): boolean {
  if (value.length > 320 || !value.includes("@")) return false;
  const at = value.lastIndexOf("@");
  const user = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (!DOT_ATOM.test(user) && !QUOTED.test(user)) return false;
  if (domain === "localhost" || LITERAL.test(domain)) return true;
  return DOMAIN.test(domain) && !domain.endsWith("-");
}

/** Why an address may not join an organization (Zulip's DomainNotAllowedForRealmError and friends). */
export type EmailRealmProblem = "plus" | "domain" | "disposable";

/** Domains on the disposable list that Zulip accepts anyway (name_restrictions.py OVERRIDE_ALLOW_EMAIL_DOMAINS). */
const OVERRIDE_ALLOW_EMAIL_DOMAINS = new Set([
  "airsi.de",
  "opayq.com",
  "abinemail.com",
  "blurmail.net",
  "maskmemail.com",
]);
let disposableDomains: Set<string> | undefined;

/**
 * is_disposable_domain, over the disposable-email-domains list (the one Zulip's Python package
 * mirrors). Its 120,000 names are loaded on first use, not at start-up.
 */
export function isDisposableDomain(domain: string): boolean {
  const d = domain.toLowerCase();
  if (OVERRIDE_ALLOW_EMAIL_DOMAINS.has(d)) return false;
  disposableDomains ??= new Set(
    createRequire(import.meta.url)("disposable-email-domains/index.json") as string[],
  );
  return disposableDomains.has(d);
}

/**
 * get_realm_email_validator (zerver/lib/email_validation.py): a check of addresses against the
 * organization's rules, its allowed domains read once for any number of addresses. An
 * organization restricted to its domains refuses `+` in the local part and other domains (no
 * disposable check: its list is already short); any other refuses disposable domains when
 * `disallow_disposable_email_addresses` is set.
 */
export async function realmEmailValidator(
  db: Db,
  realm: Pick<Realm, "id" | "emailsRestrictedToDomains" | "disallowDisposableEmailAddresses">,
): Promise<(email: string) => EmailRealmProblem | null> {
  const domainOf = (email: string) => email.slice(email.lastIndexOf("@") + 1).toLowerCase();
  if (!realm.emailsRestrictedToDomains)
    return (email) =>
      realm.disallowDisposableEmailAddresses && isDisposableDomain(domainOf(email))
        ? "disposable"
        : null;
  const rows = await db.realmDomain.findMany({
    where: { realmId: realm.id },
    select: { domain: true, allowSubdomains: true },
  });
  const allowed = new Set(rows.map((r) => r.domain.toLowerCase()));
  const parents = new Set(rows.filter((r) => r.allowSubdomains).map((r) => r.domain.toLowerCase()));
  return (email) => {
    if (email.slice(0, email.lastIndexOf("@")).includes("+")) return "plus";
    const labels = domainOf(email).split(".");
    if (allowed.has(labels.join("."))) return null;
    for (let i = 1; i < labels.length; i++) if (parents.has(labels.slice(i).join("."))) return null;
    return "domain";
  };
}

/**
 * email_allowed_for_realm as create_user_backend words its refusals (POST /users).
 */
export async function checkEmailAllowedForRealm(
  db: Db,
  realm: Pick<Realm, "id" | "emailsRestrictedToDomains" | "disallowDisposableEmailAddresses">,
  email: string,
): Promise<void> {
  const problem = (await realmEmailValidator(db, realm))(email);
  if (problem === "plus") throw new JsonableError("Email addresses containing + are not allowed.");
  if (problem === "domain")
    throw new JsonableError(`Email '${email}' not allowed in this organization`);
  if (problem === "disposable")
    throw new JsonableError("Disposable email addresses are not allowed in this organization");
}
