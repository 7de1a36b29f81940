/**
 * A loopback webhook receiver for tests: a real node:http server on 127.0.0.1 that records
 * every request's headers and exact raw body bytes, and answers with a status the test sets.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

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
  /** When set, requests are held open (never answered) until release() is called. */
  hold: boolean;
  release(): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const held: http.ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    status: 200,
    hold: false,
    release() {
      for (const res of held.splice(0)) res.writeHead(receiver.status).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held.splice(0)) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      receiver.received.push({ headers: req.headers, raw, json: JSON.parse(raw.toString('utf8')) });
      if (receiver.hold) held.push(res);
      else res.writeHead(receiver.status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}
