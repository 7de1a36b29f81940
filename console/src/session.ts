/** Signing in and out: an API key is exchanged once for the account session (POST /account/session). */
import type { Capability } from '../../companion/account/people.ts';
import { api, apiResponse, setCsrfToken } from './api.ts';

export type { Capability };

export interface Usage {
  tenant_kind: 'sandbox' | 'production';
  actions_used: number;
  cap: number | null;
  remaining: number | null;
  credits_used: number;
  cost_cents: number;
  warning: string | null;
}

/** GET /account/me: who is signed in, for which tenant, and what they may do. */
export interface Me {
  tenant_id: string;
  tenant_kind: 'sandbox' | 'production';
  display_name: string;
  person: { id: string; role: 'owner' | 'member' } | null;
  /** Who acts: the person, or the service account of the key the session was opened with. */
  principal: { id: string; kind: 'person' | 'service_account'; display_name: string };
  capabilities: Capability[];
  usage: Usage;
}

export async function signIn(apiKey: string): Promise<Me> {
  const res = await apiResponse('/account/session', { method: 'POST', headers: { 'x-service-key': apiKey } });
  const body = (await res.json()) as { csrf_token: string };
  setCsrfToken(body.csrf_token);
  return currentSession() as Promise<Me>;
}

export async function currentSession(): Promise<Me | null> {
  try {
    return await api<Me>('/account/me');
  } catch {
    return null;
  }
}

export async function signOut(): Promise<void> {
  try {
    await apiResponse('/account/logout', { method: 'POST' });
  } finally {
    setCsrfToken(null);
  }
}

export function can(me: Me, capability: Capability): boolean {
  return me.capabilities.includes(capability);
}
