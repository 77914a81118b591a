/** One alert e-mail as the delivery worker hands it to a transport; `from` is the transport's. */
export interface OutgoingMail {
  /** Stable per notification, so that a crash-induced second send can be recognised by mail systems. */
  messageId: string;
  to: readonly string[];
  subject: string;
  text: string;
  headers?: Readonly<Record<string, string>>;
}

/** Recipients the server refused while accepting the message for the others. */
export interface SendResult {
  rejected: string[];
}

/**
 * Where alert e-mails go. `send` resolves once the mail server has accepted the message (for
 * at least one recipient) and rejects otherwise; the error message never carries a credential.
 */
export interface MailTransport {
  send(mail: OutgoingMail): Promise<SendResult>;
  close(): void;
}

/** Keeps messages in memory; `failNext` makes the next sends reject. For tests and dry runs. */
export function createMemoryTransport() {
  const sent: OutgoingMail[] = [];
  let failures: Error[] = [];
  let delayMs = 0;
  return {
    sent,
    async send(mail: OutgoingMail): Promise<SendResult> {
      // Yield like a network call would, so that racing workers interleave.
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const failure = failures.shift();
      if (failure) throw failure;
      sent.push(mail);
      return { rejected: [] };
    },
    close(): void {},
    failNext(count = 1, error: Error = new Error('connect ECONNREFUSED 127.0.0.1:25')): void {
      failures = failures.concat(Array.from({ length: count }, () => error));
    },
    setDelay(ms: number): void {
      delayMs = ms;
    },
  } satisfies MailTransport & Record<string, unknown>;
}

export type MemoryTransport = ReturnType<typeof createMemoryTransport>;
