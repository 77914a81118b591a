import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * Starts a mock provider's server on an ephemeral 127.0.0.1 port. `close()` destroys open
 * sockets first (held or hanging streams included), so a test never waits on a keep-alive.
 * Closing twice is fine.
 */
export async function listenOnLoopback(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  let closed: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
      return closed;
    },
  };
}
