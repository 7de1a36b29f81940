/**
 * Serving an app over HTTP with @hono/node-server, and stopping it gracefully: stop
 * accepting, let in-flight requests finish (bounded by a grace period), then report closed so
 * the caller can stop workers and close the database.
 */
import { getRequestListener, serve } from '@hono/node-server';
import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ProblemError, problemBody, toProblem } from './errors.ts';
import type { Logger } from './log.ts';
import { errorFields } from './log.ts';
import { createIdFactory } from './ids.ts';

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
  /** A listener in front of the app's, handed the app's for what it does not answer (http/hot-path.ts). */
  front?: (app: RequestListener) => RequestListener;
}

export function startServer(app: FetchApp, options: StartServerOptions): Promise<RunningServer> {
  const { log } = options;
  const front = options.front ?? ((app: RequestListener) => app);
  let closing = false;
  // Last line of defence: the app's onError already answers problem+json; should that ever
  // throw, still answer problem+json rather than the adapter's bare 500.
  const fetch = async (request: Request, env: unknown): Promise<Response> => {
    try {
      return await app.fetch(request, env);
    } catch (err) {
      log.error('request failed outside the app error handler', errorFields(err));
      return adapterProblem(toProblem(err).problem);
    }
  };
  return new Promise((resolve, reject) => {
    const server = serve(
      {
        fetch,
        hostname: options.host,
        port: options.port,
        // serve() has no errorHandler option, so build its server with a listener that has one.
        createServer: ((serverOptions: object) =>
          createServer(serverOptions, front(getRequestListener(fetch, { hostname: options.host, errorHandler: answerRequestError })))) as typeof createServer,
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

const adapterIds = createIdFactory();

/** problem+json for answers made outside the app, with a request id like the app's own. */
function adapterProblem(problem: ProblemError): Response {
  const requestId = adapterIds.next('req');
  const body = JSON.stringify(problemBody(problem, { requestId }));
  return new Response(body, {
    status: problem.status,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store', 'x-request-id': requestId },
  });
}

/**
 * @hono/node-server refuses some requests before the app runs (its RequestError: a backslash in
 * the path, a Host header that is not a host, an absolute URL it cannot read) and would answer
 * a bare 400. The error's message is the adapter's own wording, never the request's text.
 */
function answerRequestError(): Response {
  return adapterProblem(new ProblemError({ status: 400, code: 'bad_request', detail: 'the request target or Host header is not a valid URL (RFC 9112 §3.2)' }));
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
  const requestId = adapterIds.next('req');
  const body = JSON.stringify(problemBody(new ProblemError({ status, code: 'bad_request', detail: 'the request could not be parsed as HTTP/1.1' }), { requestId }));
  const phrase = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${phrase}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
  );
}
