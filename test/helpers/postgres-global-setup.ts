/**
 * One PostgreSQL server for a whole vitest run of the project api-on-postgres, stopped and
 * removed when the run ends; every test context gets a database of its own on it
 * (test/companion/helpers.ts). A server per test process would have to stop itself when its
 * process ends, and vitest ends its worker processes without running their exit handlers: each
 * such server outlived the run, with its data directory in the temp folder.
 */
import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresSocketDir: string;
  }
}

export default function setup(project: TestProject): () => void {
  // Two or three test processes at once, each with a few contexts of up to 10 connections.
  const server = startPostgres({ maxConnections: 300 });
  project.provide('postgresSocketDir', server.socketDir);
  return () => server.stop();
}
