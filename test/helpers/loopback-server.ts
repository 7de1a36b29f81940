/**
 * A real node:http server on 127.0.0.1 for stand-ins of outside services (webhook receivers,
 * workflow and chat platforms): it collects each request's exact raw body, hands it to the
 * stand-in's handler, and closes with every connection it still holds.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackServer {
  server: http.Server;
  /** http://127.0.0.1:<port> */
  origin: string;
  close(): Promise<void>;
}

export async function listenLoopback(handle: (req: http.IncomingMessage, raw: Buffer, res: http.ServerResponse) => void): Promise<LoopbackServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, Buffer.concat(chunks), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
