/**
 * The invitation email, in Zulip's words (templates/zerver/emails/invitation.subject.txt,
 * invitation.txt and invitation.html): who invites, to which organization, and the link to the
 * sign-up page. The expiry line is ours: Zulip says it in a reminder two days before instead.
 */
import { escapeAttr, escapeText } from "../markdown/text.ts";

export interface InvitationContext {
  referrerFullName: string;
  /** The referrer's real (delivery) address, as Zulip puts it in the invitation. */
  referrerEmail: string;
  realmName: string;
  realmUrl: string;
  /** The sign-up link (`<realm url>/join/<key>/`). */
  activateUrl: string;
  /** When the link stops working; null when it never does. */
  expiryDate: Date | null;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** "Thursday, 7 December 2026 at 14:05 UTC": unambiguous for any reader, whatever their locale. */
function formatExpiry(date: Date): string {
  return `${new Intl.DateTimeFormat("en-GB", {
    dateStyle: "full",
    timeStyle: "short",
    timeZone: "UTC",
  }).format(date)} UTC`;
}

export function invitationEmail(c: InvitationContext): RenderedEmail {
  // The subject is one line: a name cannot break the header (Zulip strips newlines too).
  const subject = `${c.referrerFullName} has invited you to join ${c.realmName}`.replace(
    /[\r\n]+/g,
    " ",
  );
  const expiry = c.expiryDate
    ? `This invitation expires on ${formatExpiry(c.expiryDate)}.`
    : "This invitation does not expire.";
  const text = [
    "Hi there,",
    "",
    `${c.referrerFullName} (${c.referrerEmail}) wants you to join them on Zulip -- the team communication tool designed for productivity.`,
    "",
    `Organization: ${c.realmName} <${c.realmUrl}>`,
    "",
    "To get started, click the link below.",
    `    <${c.activateUrl}>`,
    "",
    expiry,
    "",
  ].join("\n");
  const link = (href: string, label: string) =>
    `<a href="${escapeAttr(href)}">${escapeText(label)}</a>`;
  const html = `<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>${escapeText(subject)}</title></head>
<body>
<p>Hi there,</p>
<p><b>${escapeText(c.referrerFullName)}</b> (${link(`mailto:${c.referrerEmail}`, c.referrerEmail)}) wants you to join them on Zulip &mdash; the team communication tool designed for productivity.</p>
<p>Organization: ${link(c.realmUrl, c.realmName)}</p>
<p>To get started, click the button below.
<a class="button" href="${escapeAttr(c.activateUrl)}">Complete registration</a></p>
<p>${escapeText(expiry)}</p>
</body>
</html>
`;
  return { subject, text, html };
}
