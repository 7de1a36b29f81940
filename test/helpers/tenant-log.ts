/**
 * A tenant's log as the tests that write it from several places at once read it back (two
 * companions on PostgreSQL, the sealing thread beside the request thread): one entry per sealed
 * record in tenant_seq order, with the previous-hash link its attestation commits to.
 */
import { expect } from 'vitest';

export interface LogEntry {
  tenant_seq: number;
  action_key: string;
  attestation_hash: string;
  prev: string | null;
}

/** The rows TENANT_LOG_SQL returns, for any engine's client. */
export interface LogRow {
  tenant_seq: number;
  action_key: string;
  attestation_hash: string;
  attestation: string;
}

/** One `?` parameter: the tenant id. */
export const TENANT_LOG_SQL = 'SELECT tenant_seq, action_key, attestation_hash, attestation FROM sealed_records WHERE tenant_id = ? ORDER BY tenant_seq';

export function logEntries(rows: readonly LogRow[]): LogEntry[] {
  return rows.map(({ attestation, ...r }) => ({ ...r, prev: (JSON.parse(attestation) as { prev_attestation_hash: string | null }).prev_attestation_hash }));
}

/** Gapless from 0, each entry linked to the one before it. */
export function expectOneUnbrokenChain(log: readonly LogEntry[]): void {
  expect(log.map((e) => e.tenant_seq)).toEqual([...log.keys()]);
  for (const [i, e] of log.entries()) expect(e.prev).toBe(i === 0 ? null : log[i - 1]!.attestation_hash);
}
