/**
 * Email addresses as Zulip accepts them: Django's EmailValidator (zerver/lib/email_validation.py
 * validate_email uses it), a dot-atom or quoted local part and a domain of dotted labels with a
 * TLD of letters or digits, `localhost`, or a bracketed IP literal; 320 characters at most.
 */
import type { Db, Realm } from "../db.ts";
import { JsonableError } from "../errors.ts";

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

/**
 * email_allowed_for_realm (zerver/lib/email_validation.py) for an organization that restricts
 * addresses to its domains: no `+` in the local part, and the domain (or, for domains that allow
 * subdomains, a parent of it) among the organization's. Zulip's disposable-address list is not
 * applied (no copy of it is shipped here).
 */
export async function checkEmailAllowedForRealm(
  db: Db,
  realm: Pick<Realm, "id" | "emailsRestrictedToDomains">,
  email: string,
): Promise<void> {
  if (!realm.emailsRestrictedToDomains) return;
  const at = email.lastIndexOf("@");
  if (email.slice(0, at).includes("+"))
    throw new JsonableError("Email addresses containing + are not allowed.");
  const domain = email.slice(at + 1).toLowerCase();
  const labels = domain.split(".");
  const parents = labels.slice(1).map((_, i) => labels.slice(i + 1).join("."));
  const match = await db.realmDomain.findFirst({
    where: {
      realmId: realm.id,
      OR: [{ domain }, { domain: { in: parents }, allowSubdomains: true }],
    },
    select: { id: true },
  });
  if (!match) throw new JsonableError(`Email '${email}' not allowed in this organization`);
}
