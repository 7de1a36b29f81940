/**
 * Operator grants (SVC_SECRET_GRANTS or SVC_SECRET_GRANTS_FILE): a JSON object, tenant id →
 * the exact secret references that tenant may use; the key "*" grants its references to every
 * tenant. A reference in a tenant's namespace (secret://tenants/{tenant_id}/…) needs no entry
 * and belongs to that tenant alone: no entry, not even "*", can grant it to another, and a
 * table that tries is refused whole, so a typo cannot hand one tenant's secret to another.
 */
import fs from 'node:fs';
import { namespaceOwner, parseSecretRef, schemeAvailable, unavailableReason } from './refs.ts';
import type { ProviderSettings, SecretRefScheme } from './refs.ts';

export type Grants = Readonly<Record<string, readonly string[]>>;

/** The key whose references every tenant may use. */
export const EVERY_TENANT = '*';

/** Whether `grants` let `tenantId` use `value` (a reference string). */
export function grantsAllow(grants: Grants, tenantId: string, value: string): boolean {
  const ref = parseSecretRef(value);
  if (!ref || tenantId === EVERY_TENANT) return false;
  const owner = namespaceOwner(ref);
  if (owner !== undefined) return owner === tenantId;
  return (grants[tenantId] ?? []).includes(value) || (grants[EVERY_TENANT] ?? []).includes(value);
}

/**
 * Every problem of a grant table, each one line naming `setting` and the entry, never a
 * reference (grant lists are operator configuration the control plane never shows either).
 */
export function grantProblems(grants: Grants, setting: string, providers: ProviderSettings): string[] {
  const problems: string[] = [];
  for (const [tenant, refs] of Object.entries(grants)) {
    const at = `${setting}[${JSON.stringify(tenant)}]`;
    const parsed = refs.map((r) => parseSecretRef(r));
    const bad = parsed.filter((r) => r === undefined).length;
    if (bad > 0) problems.push(`${at} holds ${bad} value(s) that are not secret references`);
    const foreign = parsed.filter((r) => {
      if (r === undefined) return false;
      const owner = namespaceOwner(r);
      return owner !== undefined && (owner === null || owner !== tenant);
    }).length;
    if (foreign > 0) problems.push(`${at} grants ${foreign} reference(s) in another tenant's namespace (secret://tenants/{tenant_id}/… belongs to that tenant alone)`);
    const unavailable = new Set<SecretRefScheme>();
    for (const r of parsed) if (r !== undefined && !schemeAvailable(r.scheme, providers)) unavailable.add(r.scheme);
    for (const scheme of unavailable) problems.push(`${at} grants ${scheme}:// references this service cannot resolve (${unavailableReason(scheme)})`);
  }
  return problems;
}

/** A JSON object whose values are arrays of strings, or why not. */
export function parseGrantTable(text: string, setting: string): { ok: true; grants: Record<string, string[]> } | { ok: false; problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, problem: `${setting} must be a JSON object whose values are arrays of strings: not valid JSON` };
  }
  const ok =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) &&
    Object.values(parsed).every((v) => Array.isArray(v) && v.every((s) => typeof s === 'string'));
  if (!ok) return { ok: false, problem: `${setting} must be a JSON object whose values are arrays of strings` };
  return { ok: true, grants: parsed as Record<string, string[]> };
}

/** Reads and checks SVC_SECRET_GRANTS_FILE; the first problem, one line, when it cannot be used. */
export function readGrantsFile(file: string, providers: ProviderSettings): { ok: true; grants: Record<string, string[]> } | { ok: false; problem: string } {
  const setting = 'SVC_SECRET_GRANTS_FILE';
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { ok: false, problem: `${setting} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}): ${file}` };
  }
  const table = parseGrantTable(text, setting);
  if (!table.ok) return table;
  const problems = grantProblems(table.grants, setting, providers);
  return problems.length > 0 ? { ok: false, problem: problems[0]! } : table;
}

/** Reads and checks SVC_SECRET_REF_MAP_FILE: a JSON object of secret://… reference → string. */
export function readRefMapFile(file: string): { ok: true; map: Record<string, string> } | { ok: false; problem: string } {
  const setting = 'SVC_SECRET_REF_MAP_FILE';
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { ok: false, problem: `${setting} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}): ${file}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, problem: `${setting} must be a JSON object of secret://… reference → string: not valid JSON` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, problem: `${setting} must be a JSON object of secret://… reference → string` };
  }
  const entries = Object.entries(parsed);
  // Counts only: the values are the secrets themselves.
  const notStrings = entries.filter(([, v]) => typeof v !== 'string').length;
  if (notStrings > 0) return { ok: false, problem: `${setting} must map each reference to a string; ${notStrings} value(s) are not strings` };
  const badKeys = entries.filter(([k]) => parseSecretRef(k)?.scheme !== 'secret').length;
  if (badKeys > 0) return { ok: false, problem: `${setting} keys must be secret://… references; ${badKeys} key(s) are not` };
  return { ok: true, map: parsed as Record<string, string> };
}
