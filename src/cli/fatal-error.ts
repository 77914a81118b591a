/** An error that ends the CLI with a message and an exit code (1 server/runtime, 2 usage). */
export class FatalError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'FatalError';
  }
}
