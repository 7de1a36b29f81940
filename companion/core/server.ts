/**
 * Serving an app over HTTP with @hono/node-server, and stopping it gracefully: stop
 * accepting, let in-flight requests finish (bounded by a grace period), then report closed so
 * the caller can stop workers and close the database.
 */
import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ProblemError, problemBody, toProblem } from './errors.ts';
import type { Logger } from './log.ts';
import { errorFields } from './log.ts';

export interface FetchApp {
  fetch(request: Request, env?: unknown): Response | Promise<Response>;
}

export interface RunningServer {
  readonly server: Server;
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** Stops accepting, waits for in-flight requests (at most graceMs), then resolves. */
  close(): Promise<void>;
}

export interface StartServerOptions {
  host: string;
  port: number;
  graceMs: number;
  log: Logger;
}

export function startServer(app: FetchApp, options: StartServerOptions): Promise<RunningServer> {
  const { log } = options;
  let closing = false;
  return new Promise((resolve, reject) => {
    const server = serve(
      {
        // Last line of defence: the app's onError already answers problem+json; should that
        // ever throw, still answer problem+json rather than the adapter's bare 500.
        fetch: async (request, env) => {
          try {
            return await app.fetch(request, env);
          } catch (err) {
            log.error('request failed outside the app error handler', errorFields(err));
            const body = problemBody(toProblem(err).problem);
            return new Response(JSON.stringify(body), { status: body.status, headers: { 'content-type': 'application/problem+json' } });
          }
        },
        hostname: options.host,
        port: options.port,
      },
      (info: AddressInfo) => {
        const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
        resolve({ server, host: info.address, port: info.port, url: `http://${host}:${info.port}`, close });
      },
    ) as Server;
    server.once('error', reject);

    server.on('request', (_req, res) => {
      // During shutdown, answer then hang up: no keep-alive connection outlives its request.
      if (closing) res.shouldKeepAlive = false;
      res.on('finish', () => {
        if (closing) server.closeIdleConnections();
      });
    });
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket as Socket));

    function close(): Promise<void> {
      closing = true;
      return new Promise((done) => {
        const force = setTimeout(() => {
          log.warn('shutdown grace period over; closing remaining connections', { grace_ms: options.graceMs });
          server.closeAllConnections();
        }, options.graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          done();
        });
        server.closeIdleConnections();
      });
    }
  });
}

/**
 * Node answers unparsable requests itself with a bare text/plain status line; answer
 * problem+json there too (RFC 9457), then close the connection as Node would.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify(problemBody(new ProblemError({ status, code: 'bad_request', detail: 'the request could not be parsed as HTTP/1.1' })));
  const phrase = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${phrase}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
