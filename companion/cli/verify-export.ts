/**
 * `svc-verify <export.ndjson> [--keys <jwks>] [--json]`: verifies a records export offline,
 * record by record (interface-spec Tenant exports: each record is self-contained with its seal
 * and a ready verify request). Reads line by line, so memory stays flat for any file size; a
 * line longer than the verifier's cap, a link or a non-regular file is refused (./verify-read.ts).
 *
 * Beyond each record's own checks it confirms the export is in the order the service
 * promises: (recorded_at, tenant_seq) strictly increasing per tenant, and recorded_at agreeing
 * with the signed attestation, so a reordered or spliced file is caught too.
 * Exit status as svc-verify: 0 every record verified, 1 any failed, 2 usage error or a file
 * that holds an error answer instead of records.
 */
import { isRecord } from '../../shared/attestation.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { ErrorAnswerFile, errorAnswerMessage, problemOf } from './problem-answer.ts';
import { DEFAULT_MAX_BYTES, cappedLines } from './verify-read.ts';

export function isRecordsExport(target: string): boolean {
  return /\.ndjson$/i.test(target);
}

export interface ExportSummary {
  source: string;
  records: number;
  verified: number;
  failed: number;
  sandbox: number;
  production: number;
  /** Every failing line with what failed (a malformed line fails as a whole). */
  failures: { line: number; action_key: string | null; failed_checks: string[] }[];
}

/** Most failures listed individually; the counts stay complete. */
const MAX_LISTED_FAILURES = 100;

export async function verifyRecordsExport(file: string, keys: TrustedKeySet, maxBytes = DEFAULT_MAX_BYTES): Promise<ExportSummary> {
  const summary: ExportSummary = { source: file, records: 0, verified: 0, failed: 0, sandbox: 0, production: 0, failures: [] };
  const last = new Map<string, { recordedAt: string; seq: number }>();
  let line = 0;
  for await (const text of cappedLines(file, maxBytes)) {
    line++;
    if (text.trim() === '') continue;
    summary.records++;
    const failed: string[] = [];
    let actionKey: string | null = null;
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      failed.push('json');
    }
    // An error answer saved where the export was expected (curl without --fail): the file holds
    // no records at all, so it is refused as a whole, not counted as one record that failed.
    const problem = summary.records === 1 ? problemOf(record) : undefined;
    if (problem) throw new ErrorAnswerFile(errorAnswerMessage(file, problem));
    if (isRecord(record) && isRecord(record.verify_request)) {
      actionKey = typeof record.action_key === 'string' ? record.action_key : null;
      const result = await verifyEvidence(record.verify_request, keys);
      failed.push(...failedChecks(result));
      if (result.verified) (result.key_status === 'sandbox' ? summary.sandbox++ : summary.production++);
      failed.push(...orderChecks(record, last));
    } else if (failed.length === 0) {
      failed.push('verify_request');
    }
    if (failed.length === 0) summary.verified++;
    else {
      summary.failed++;
      if (summary.failures.length < MAX_LISTED_FAILURES) summary.failures.push({ line, action_key: actionKey, failed_checks: failed });
    }
  }
  return summary;
}

/** The export's promise: per tenant, strictly increasing (recorded_at, tenant_seq), both as signed. */
function orderChecks(record: Record<string, unknown>, last: Map<string, { recordedAt: string; seq: number }>): string[] {
  const packet = record.verify_request as Record<string, unknown>;
  const attestation = isRecord(packet.seal) && isRecord(packet.seal.attestation) ? packet.seal.attestation : {};
  const tenant = String(attestation.tenant_id ?? '');
  const recordedAt = String(attestation.recorded_at ?? '');
  const seq = Number(attestation.tenant_seq);
  const failed: string[] = [];
  if (record.recorded_at !== recordedAt || record.tenant_seq !== seq) failed.push('export_fields_match_attestation');
  const prev = last.get(tenant);
  if (prev && (recordedAt < prev.recordedAt || (recordedAt === prev.recordedAt && seq <= prev.seq))) failed.push('export_order');
  last.set(tenant, { recordedAt, seq });
  return failed;
}

export function formatExportSummary(s: ExportSummary): string {
  const lines = [`Records export ${s.source}`];
  for (const f of s.failures) lines.push(`  FAIL  line ${f.line}  ${f.action_key ?? '(unreadable record)'}  ${f.failed_checks.join(', ')}`);
  if (s.failed > s.failures.length) lines.push(`  … and ${s.failed - s.failures.length} more failing records`);
  lines.push(`  ${s.records} records: ${s.verified} verified, ${s.failed} failed (${s.production} production-key, ${s.sandbox} sandbox dev-key)`);
  if (s.records === 0) lines.push('  RESULT: EMPTY EXPORT (nothing to verify)');
  else if (s.failed > 0) lines.push('  RESULT: NOT VERIFIED');
  else if (s.sandbox > 0) lines.push('  RESULT: VERIFIED; sandbox records are never production evidence');
  else lines.push('  RESULT: VERIFIED');
  return lines.join('\n');
}
