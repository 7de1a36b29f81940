/**
 * A loopback webhook receiver for tests: a real node:http server on 127.0.0.1 that records
 * every request's headers and exact raw body bytes, and answers with a status the test sets.
 */
import http from 'node:http';
import { listenLoopback } from '../helpers/loopback-server.ts';

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  json: any;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  /** Status answered from now on (default 200). */
  status: number;
  /** Headers answered with it (default none). */
  headers: Record<string, string>;
  /** When set, requests are held open (never answered) until release() is called. */
  hold: boolean;
  release(): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const held: http.ServerResponse[] = [];
  const received: ReceivedRequest[] = [];
  const loopback = await listenLoopback((req, raw, res) => {
    received.push({ headers: req.headers, raw, json: JSON.parse(raw.toString('utf8')) });
    if (receiver.hold) held.push(res);
    else res.writeHead(receiver.status, receiver.headers).end();
  });
  const receiver: Receiver = {
    url: `${loopback.origin}/hook`,
    received,
    status: 200,
    headers: {},
    hold: false,
    release() {
      for (const res of held.splice(0)) res.writeHead(receiver.status).end();
    },
    close() {
      for (const res of held.splice(0)) res.destroy();
      return loopback.close();
    },
  };
  return receiver;
}
