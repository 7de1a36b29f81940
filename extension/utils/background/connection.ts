/**
 * The options page's connection test and the popup's connection state:
 * tenant and usage (GET /tenant/usage), the tenant's API keys and their status
 * (GET /tenant/api-keys), and the companion's signing keys as pinned here.
 */
import type { ExtensionDatabase } from '../db.ts';
import type { ConnectionReport, PackSummary, Usage } from '../messages.ts';
import { isRecord } from '../../../shared/attestation.ts';
import { CompanionError } from './companion-api.ts';
import type { CompanionApi } from './companion-api.ts';
import type { KeyPins } from './key-pins.ts';

export async function fetchUsage(api: CompanionApi): Promise<Usage> {
  const u = await api.get('/tenant/usage');
  if (!isRecord(u) || typeof u.tenant_id !== 'string' || typeof u.actions_used !== 'number') {
    throw new CompanionError('invalid-answer', 'GET /tenant/usage: expected the usage ledger');
  }
  return {
    tenant_id: u.tenant_id,
    tenant_kind: String(u.tenant_kind ?? ''),
    actions_used: u.actions_used,
    cap: typeof u.cap === 'number' ? u.cap : null,
    remaining: typeof u.remaining === 'number' ? u.remaining : null,
    warning: typeof u.warning === 'string' ? u.warning : null,
  };
}

export async function testConnection(api: CompanionApi, pins: KeyPins, db: ExtensionDatabase): Promise<ConnectionReport> {
  const empty: ConnectionReport = { ok: false, detail: '', tenant_id: null, usage: null, api_keys: [], signing_keys: [], alarms: [] };
  try {
    const usage = await fetchUsage(api);
    const keys = await api.get('/tenant/api-keys');
    const apiKeys = isRecord(keys) && Array.isArray(keys.keys) ? keys.keys.filter(isRecord) : [];
    await pins.refresh();
    return {
      ok: true,
      detail: `Connected to tenant ${usage.tenant_id} (${usage.tenant_kind}).`,
      tenant_id: usage.tenant_id,
      usage,
      api_keys: apiKeys.map((k) => ({ prefix: String(k.prefix), last_four: String(k.last_four), status: String(k.status) })),
      signing_keys: await db.pinnedKeys.toArray(),
      alarms: await db.keyAlarms.orderBy('time').reverse().toArray(),
    };
  } catch (e) {
    if (!(e instanceof CompanionError)) throw e;
    return { ...empty, detail: e.message, signing_keys: await db.pinnedKeys.toArray(), alarms: await db.keyAlarms.toArray() };
  }
}

export async function listPacks(api: CompanionApi): Promise<PackSummary[]> {
  const body = await api.getPublic('/v1/packs');
  if (!isRecord(body) || !Array.isArray(body.packs)) throw new CompanionError('invalid-answer', 'GET /v1/packs: expected { packs: [...] }');
  return body.packs
    .filter((p): p is Record<string, unknown> => isRecord(p) && p.kind === 'gate')
    .map((p) => ({
      name: String(p.name),
      context_field: String(p.context_field ?? 'context'),
      default_action_type: typeof p.default_action_type === 'string' ? p.default_action_type : null,
      required_fields: Array.isArray(p.required_fields) ? p.required_fields.map(String) : [],
      action_types: (Array.isArray(p.action_types) ? p.action_types.filter(isRecord) : []).map((a) => ({
        id: String(a.id),
        title: String(a.title ?? a.id),
        default_decision: String(a.default_decision ?? ''),
      })),
    }));
}
