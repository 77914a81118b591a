import type { Transporter } from 'nodemailer';
import type { Config } from '../config/schema.js';
import type { MailTransport, OutgoingMail, SendResult } from './transport.js';

export type SmtpSettings = Pick<Config, 'smtp_port' | 'smtp_secure' | 'smtp_user' | 'smtp_password' | 'smtp_from'> & {
  smtp_host: string;
};

/** Longest error text kept in the outbox and the log. */
const MAX_ERROR_LENGTH = 500;

/**
 * A send failure whose message has been scrubbed of the SMTP credentials (in clear and in the
 * base64 forms AUTH PLAIN and AUTH LOGIN put on the wire), so it can be logged and stored.
 */
export class MailSendError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly responseCode: number | undefined,
  ) {
    super(message);
    this.name = 'MailSendError';
  }
}

function secretForms(user: string | undefined, password: string | undefined): string[] {
  if (!password) return [];
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const forms = [password, b64(password)];
  if (user) forms.push(b64(`\u0000${user}\u0000${password}`), b64(`${user}\u0000${user}\u0000${password}`));
  return forms.filter((f) => f.length >= 4);
}

export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('[REDACTED]');
  return out.length > MAX_ERROR_LENGTH ? `${out.slice(0, MAX_ERROR_LENGTH)}…` : out;
}

function toSendError(error: unknown, secrets: readonly string[]): MailSendError {
  const e = (error ?? {}) as { message?: unknown; code?: unknown; responseCode?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(error);
  const code = typeof e.code === 'string' ? e.code : undefined;
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  return new MailSendError(
    scrub(code && !message.startsWith(code) ? `${code}: ${message}` : message, secrets),
    code,
    responseCode,
  );
}

const addressOf = (a: unknown) =>
  typeof a === 'string' ? a : typeof a === 'object' && a !== null && 'address' in a ? String(a.address) : String(a);

/**
 * Sends alert e-mails through one SMTP server with nodemailer: implicit TLS when
 * `smtp_secure`, otherwise STARTTLS whenever the server offers it; login only when a user is
 * set. Time-outs are short so that a hung server costs one retry, not the worker. nodemailer
 * is loaded with the first e-mail: a gateway that sends none does not carry it in memory.
 */
export function createSmtpTransport(config: SmtpSettings): MailTransport {
  const secrets = secretForms(config.smtp_user, config.smtp_password);
  let transporter: Transporter | null = null;
  const connect = async (): Promise<Transporter> =>
    (transporter ??= (await import('nodemailer')).default.createTransport({
      host: config.smtp_host,
      port: config.smtp_port,
      secure: config.smtp_secure,
      ...(config.smtp_user ? { auth: { user: config.smtp_user, pass: config.smtp_password ?? '' } } : {}),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 60_000,
      disableFileAccess: true,
      disableUrlAccess: true,
      logger: false,
      debug: false,
    }));
  return {
    async send(mail: OutgoingMail): Promise<SendResult> {
      try {
        const info = await (
          await connect()
        ).sendMail({
          from: config.smtp_from,
          to: [...mail.to],
          subject: mail.subject,
          text: mail.text,
          messageId: mail.messageId,
          ...(mail.headers ? { headers: { ...mail.headers } } : {}),
        });
        return { rejected: (info.rejected ?? []).map(addressOf) };
      } catch (error) {
        throw toSendError(error, secrets);
      }
    },
    close: () => transporter?.close(),
  };
}
