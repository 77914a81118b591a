/**
 * Express ships no types and @types/express is not installed; the A2A test peer only mounts the
 * SDK's routers on it (test/helpers/a2a-agent.ts), so a little of its surface is enough.
 */
declare module 'express' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  interface ExpressApp {
    (req: IncomingMessage, res: ServerResponse): void;
    use(...handlers: unknown[]): ExpressApp;
  }
  const express: () => ExpressApp;
  export default express;
}
