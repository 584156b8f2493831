/**
 * Email addresses as Zulip accepts them: Django's EmailValidator (zerver/lib/email_validation.py
 * validate_email uses it), a dot-atom or quoted local part and a domain of dotted labels with a
 * TLD of letters or digits, `localhost`, or a bracketed IP literal; 320 characters at most.
 */
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
