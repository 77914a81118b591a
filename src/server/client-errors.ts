import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { codeToStatus, errorBody, type ErrorCode } from '../lib/errors.js';
import type { Logger } from '../telemetry/logger.js';

/**
 * Requests Node's HTTP parser refuses before fastify sees them (headers over 16 KiB, a request
 * that never finishes, malformed HTTP): answered in the one error body with a request id, and
 * logged, instead of fastify's own body. No key was read, so no request-log record is written.
 */
export function createClientErrorHandler(logger: Logger) {
  return (error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { code, message } = describe(error.code);
    const requestId = randomUUID();
    const status = codeToStatus(code);
    logger.info({ request_id: requestId, status, code, parser_code: error.code }, 'request refused by the HTTP parser');
    if (socket.writable) {
      const body = JSON.stringify(errorBody(code, message));
      // An answer to HEAD has no body (a client reading one would take it for the next answer).
      // The method is known when the request line came in the packet the parser refused, as it
      // does when the headers arrive in one write.
      const packet = error.rawPacket;
      const head = Buffer.isBuffer(packet) && packet.subarray(0, 5).toString('latin1') === 'HEAD ';
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
          `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${requestId}\r\nx-service-request-id: ${requestId}\r\nconnection: close\r\n\r\n${head ? '' : body}`,
      );
    }
    socket.destroy();
  };
}

function describe(parserCode: string | undefined): { code: ErrorCode; message: string } {
  switch (parserCode) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'HEADERS_TOO_LARGE',
        message:
          'The request line and headers are larger than 16 KiB; send long filters in a request body, or fewer of them.',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'REQUEST_TIMEOUT', message: 'The request was not received in time.' };
    default:
      return { code: 'INVALID_REQUEST', message: 'The request is not well-formed HTTP/1.1.' };
  }
}
