/**
 * Counts the round trips a `postgres` pool makes: the times a connection, having had every
 * statement it sent answered, writes again, so the client waited a whole trip to the server and
 * back. Statements written while others are still unanswered (pipelined) add none. Each
 * statement of the extended protocol ends with a Sync, a simple query is one Query message, and
 * the server answers either with ReadyForQuery (PostgreSQL "Message Flow": 55.2.3, 55.2.2), so
 * a connection is waiting for nothing when it has had a ReadyForQuery for every Sync and Query
 * it wrote. Pass `socket` as the driver's `socket` option (postgres.js: a connected socket).
 */
import net from 'node:net';
import path from 'node:path';
import { once } from 'node:events';

export interface RoundTrips {
  /** Counting only while true. */
  counting: boolean;
  roundTrips: number;
  /** Statements written (Syncs and simple queries). */
  statements: number;
  /** For the driver's `socket` option: a connection to the server in `socketDir` that counts. */
  socket(): Promise<net.Socket>;
}

/** Each message of a protocol buffer after the start-up: its type and where it ends. */
function* messages(buffer: Buffer): Generator<number> {
  for (let at = 0; at + 5 <= buffer.length; ) {
    yield buffer[at]!;
    at += 1 + buffer.readInt32BE(at + 1);
  }
}

export function roundTrips(socketDir: string, port = 5432): RoundTrips {
  const counter: RoundTrips = {
    counting: false,
    roundTrips: 0,
    statements: 0,
    async socket() {
      const socket = net.createConnection(path.join(socketDir, `.s.PGSQL.${port}`));
      await once(socket, 'connect');
      let ready = false;
      let unanswered = 0;
      let pending: Buffer = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        // Server messages may be split across chunks: whole ones are read, the rest kept.
        pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
        let at = 0;
        while (at + 5 <= pending.length) {
          const end = at + 1 + pending.readInt32BE(at + 1);
          if (end > pending.length) break;
          if (pending[at] === 0x5a /* Z: ReadyForQuery */) {
            ready = true;
            unanswered = Math.max(0, unanswered - 1);
          }
          at = end;
        }
        pending = pending.subarray(at);
      });
      const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
      socket.write = ((chunk: unknown, ...rest: unknown[]) => {
        // The start-up message has no type byte; counting starts once the server is ready.
        if (ready && Buffer.isBuffer(chunk)) {
          let ends = 0;
          for (const type of messages(chunk)) if (type === 0x53 /* S: Sync */ || type === 0x51 /* Q: Query */) ends++;
          if (ends > 0) {
            if (counter.counting) {
              if (unanswered === 0) counter.roundTrips++;
              counter.statements += ends;
            }
            unanswered += ends;
          }
        }
        return write(chunk, ...rest);
      }) as typeof socket.write;
      return socket;
    },
  };
  return counter;
}
