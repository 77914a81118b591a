import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { onTestFinished } from 'vitest';

export interface Received {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
}

/** A real SMTP server on 127.0.0.1 (no TLS) that keeps what it receives. */
export async function startSmtp(options: { port?: number; auth?: SMTPServerOptions['onAuth'] } = {}) {
  const received: Received[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    allowInsecureAuth: true,
    authOptional: !options.auth,
    closeTimeout: 100,
    logger: false,
    ...(options.auth ? { onAuth: options.auth } : {}),
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        received.push({
          mailFrom: from ? from.address : '',
          rcptTo: session.envelope.rcptTo.map((a) => a.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  let closed = false;
  const close = () =>
    closed ? Promise.resolve() : ((closed = true), new Promise<void>((resolve) => server.close(() => resolve())));
  onTestFinished(close);
  return { port, received, close };
}
