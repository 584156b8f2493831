/**
 * Where outgoing email goes (nodemailer): an SMTP server when EMAIL_HOST is set, with Zulip's
 * (Django's) settings; otherwise, the laptop default, each message as an RFC 822 `.eml` file in
 * DATA_DIR/emails, which any mail client opens. The delivery loop (workers/email-delivery.ts)
 * decides when; this only sends one message.
 */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Transporter } from "nodemailer";
import type { Config } from "../../config.ts";

export interface EmailMessage {
  /** The outbox row: it names the file and makes the Message-ID, the same on every attempt. */
  outboxId: number;
  createdAt: Date;
  /** null: Zulip's FromAddress.NOREPLY ("Zulip" <NOREPLY_EMAIL_ADDRESS>). */
  from: string | null;
  to: string;
  replyTo: string | null;
  subject: string;
  text: string;
  html: string | null;
  /** Extra headers, as they are (List-Unsubscribe); null: none. */
  headers: Record<string, string> | null;
}

export interface EmailTransport {
  /** For the start-up log line: where mail goes (never the credentials). */
  readonly destination: { smtp: string } | { directory: string };
  send(message: EmailMessage): Promise<void>;
  close(): void;
}

/**
 * Django's EMAIL_TIMEOUT as Zulip sets it (15 s), for connecting, the greeting and each read: a
 * send that hangs fails instead, so the delivery loop's claim on it (email-delivery.ts) outlives it.
 */
export const EMAIL_TIMEOUT_MS = 15_000;

/**
 * nodemailer is loaded on the first message sent, not at start-up: most processes send no mail
 * for a long time, and loading it cost start-up time and some 10 MiB of memory in every process.
 */
let nodemailer: Promise<typeof import("nodemailer")> | undefined;
const loadNodemailer = () => (nodemailer ??= import("nodemailer"));

/** A nodemailer transport made on first use, with `options`. */
function lazyTransport(options: Parameters<typeof import("nodemailer").createTransport>[0]) {
  let made: Promise<Transporter> | undefined;
  return {
    get: () => (made ??= loadNodemailer().then((m) => m.createTransport(options))),
    close: () => void made?.then((t) => t.close()),
  };
}

export function createEmailTransport(
  config: Pick<
    Config,
    | "dataDir"
    | "emailHost"
    | "emailPort"
    | "emailHostUser"
    | "emailHostPassword"
    | "emailUseTls"
    | "emailUseSsl"
    | "noreplyEmailAddress"
  >,
): EmailTransport {
  const noreply = { name: "Zulip", address: config.noreplyEmailAddress };
  // A stable Message-ID per outbox row: should a message ever go out twice (a process killed
  // between the SMTP server's acceptance and marking the row sent), mail clients show it once.
  const domain = config.noreplyEmailAddress.split("@").pop();
  const fields = (m: EmailMessage) => ({
    from: m.from ?? noreply,
    to: m.to,
    ...(m.replyTo ? { replyTo: m.replyTo } : {}),
    subject: m.subject,
    text: m.text,
    ...(m.html ? { html: m.html } : {}),
    ...(m.headers ? { headers: m.headers } : {}),
    messageId: `<outbox-${m.outboxId}.${m.createdAt.getTime()}@${domain}>`,
    date: new Date(),
  });

  if (config.emailHost) {
    const smtp = lazyTransport({
      host: config.emailHost,
      port: config.emailPort,
      secure: config.emailUseSsl,
      // EMAIL_USE_TLS requires STARTTLS; without it Django never upgrades, and neither do we.
      requireTLS: config.emailUseTls,
      ignoreTLS: !config.emailUseTls && !config.emailUseSsl,
      // Django logs in only when both are set.
      ...(config.emailHostUser && config.emailHostPassword
        ? { auth: { user: config.emailHostUser, pass: config.emailHostPassword } }
        : {}),
      connectionTimeout: EMAIL_TIMEOUT_MS,
      greetingTimeout: EMAIL_TIMEOUT_MS,
      socketTimeout: EMAIL_TIMEOUT_MS,
    });
    return {
      destination: { smtp: `${config.emailHost}:${config.emailPort}` },
      async send(message) {
        await (await smtp.get()).sendMail(fields(message));
      },
      close: smtp.close,
    };
  }

  const directory = join(config.dataDir, "emails");
  const stream = lazyTransport({ streamTransport: true, buffer: true, newline: "unix" });
  return {
    destination: { directory },
    async send(message) {
      // The stream transport with `buffer` gives the whole RFC 822 message as a Buffer.
      const sent = (await (await stream.get()).sendMail(fields(message))) as { message: Buffer };
      await mkdir(directory, { recursive: true });
      // Written whole, then renamed: a reader never sees half a message.
      // Named by time, then outbox id, so that a directory listing is in the order they went out.
      const time = new Date().toISOString().replace(/[-:]|\.\d+/g, "");
      const file = join(directory, `${time}-${message.outboxId}.eml`);
      await writeFile(`${file}.tmp`, sent.message);
      await rename(`${file}.tmp`, file);
    },
    close: stream.close,
  };
}
