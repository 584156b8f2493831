/**
 * A real SMTP server on loopback (the `smtp-server` package) that keeps what it receives, parsed
 * with `mailparser`: what a mail server would see of the messages the server sends.
 */
import type { AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import { sleep } from "./processes.ts";

export interface SmtpSink {
  port: number;
  /** The messages accepted so far, in arrival order. */
  messages: ParsedMail[];
  /** RCPT TO commands seen, refused ones included. */
  recipientsSeen: number;
  /** The users that logged in (AUTH), in order. */
  logins: string[];
  /** Waits until `count` messages have arrived (fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ParsedMail[]>;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /**
   * A temporary refusal for the n-th recipient command (1-based) when this returns a reply text:
   * the SMTP server answers 451 with it.
   */
  refuse?: (n: number) => string | undefined;
  /** How long each message takes to be accepted after its data. */
  acceptDelayMs?: number;
  /** Requires a login with this user and password (AUTH PLAIN or LOGIN, without TLS). */
  login?: { user: string; pass: string };
}

export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const messages: ParsedMail[] = [];
  const logins: string[] = [];
  const sink = { recipientsSeen: 0 };
  const server = new SMTPServer({
    authOptional: !options.login,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, _session, callback) {
      const { login } = options;
      if (!login || auth.username !== login.user || auth.password !== login.pass)
        return callback(new Error("Invalid username or password"));
      logins.push(auth.username);
      callback(null, { user: auth.username });
    },
    onRcptTo(_address, _session, callback) {
      sink.recipientsSeen++;
      const refusal = options.refuse?.(sink.recipientsSeen);
      if (refusal === undefined) return callback();
      callback(Object.assign(new Error(refusal), { responseCode: 451 }));
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        async (mail) => {
          if (options.acceptDelayMs) await sleep(options.acceptDelayMs);
          messages.push(mail);
          callback();
        },
        (err: Error) => callback(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    messages,
    logins,
    get recipientsSeen() {
      return sink.recipientsSeen;
    },
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline)
          throw new Error(`${messages.length} of ${count} messages arrived in ${timeoutMs} ms`);
        await sleep(20);
      }
      return messages;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
