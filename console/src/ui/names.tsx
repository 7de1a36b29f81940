/**
 * Names instead of ids: people, service accounts and keys as people recognise them. The
 * tenant's people, service accounts and keys are read once per page load (they need
 * people:manage; without it only the signed-in principal and the names the service puts in its
 * answers are known) and kept for every page; a change on the People page reloads them. The id
 * stays one hover away (title) and in the accessible description, never the visible text.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Me } from '../session.ts';

export interface NamedPrincipal {
  id: string;
  kind: 'person' | 'service_account' | 'key';
  name: string;
}

export type Directory = Map<string, NamedPrincipal>;

export interface PersonRow {
  id: string;
  kind: 'person';
  role: 'owner' | 'member';
  display_name: string | null;
  email: string | null;
  status: 'active' | 'deactivated';
  capabilities: string[];
  created_at: string;
}

export interface ServiceAccountRow {
  id: string;
  kind: 'service_account';
  name: string;
  status: 'active' | 'deactivated';
  capabilities: string[];
  created_at: string;
}

export interface KeyRow {
  id: string;
  prefix: string;
  last_four: string;
  label: string | null;
  principal: { id: string; kind: 'person' | 'service_account'; display_name: string };
  capabilities: string[];
  capability_subset: string[] | null;
  status: 'active' | 'expired' | 'revoked';
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** The last characters of an id: enough to tell two unnamed principals apart. */
export function idTail(id: string): string {
  return `…${id.slice(-6)}`;
}

/** A person without a display name or email (the tenant's first owner) is named by role. */
export function personName(p: Pick<PersonRow, 'id' | 'role' | 'display_name' | 'email'>): string {
  return p.display_name ?? p.email ?? `${p.role === 'owner' ? 'Owner' : 'Person'} ${idTail(p.id)}`;
}

/** The service's display_name falls back to the id itself; that is no name. */
function givenName(displayName: string | null | undefined, id: string): string | undefined {
  return displayName && displayName !== id ? displayName : undefined;
}

export function keyName(k: Pick<KeyRow, 'prefix' | 'last_four' | 'label'>): string {
  const secretHint = `${k.prefix}…${k.last_four}`;
  return k.label ? `${k.label} (${secretHint})` : secretHint;
}

function selfEntry(me: Me): NamedPrincipal {
  const role = me.person?.role ?? 'member';
  const name =
    givenName(me.principal?.display_name, me.principal?.id ?? '') ??
    (me.principal?.kind === 'service_account' ? `Service account ${idTail(me.principal.id)}` : `${role === 'owner' ? 'Owner' : 'Person'} ${idTail(me.principal?.id ?? me.person?.id ?? '')}`);
  return { id: me.principal?.id ?? me.person?.id ?? '', kind: me.principal?.kind ?? 'person', name };
}

/** How the header names whoever is signed in. */
export function selfName(me: Me): string {
  return selfEntry(me).name;
}

async function load(me: Me): Promise<Directory> {
  const dir: Directory = new Map();
  const self = selfEntry(me);
  if (self.id) dir.set(self.id, self);
  if (!me.capabilities.includes('people:manage')) return dir;
  const [people, accounts, keys] = await Promise.all([
    api<{ people: PersonRow[] }>('/account/people'),
    api<{ service_accounts: ServiceAccountRow[] }>('/account/service-accounts'),
    api<{ keys: KeyRow[] }>('/account/api-keys'),
  ]);
  for (const p of people.people) dir.set(p.id, { id: p.id, kind: 'person', name: personName(p) });
  for (const s of accounts.service_accounts) dir.set(s.id, { id: s.id, kind: 'service_account', name: s.name });
  for (const k of keys.keys) {
    const owner = dir.get(k.principal.id)?.name ?? givenName(k.principal.display_name, k.principal.id) ?? idTail(k.principal.id);
    dir.set(k.id, { id: k.id, kind: 'key', name: `${owner}’s key ${keyName(k)}` });
  }
  return dir;
}

let directory: Promise<Directory> | undefined;
const listeners = new Set<(d: Directory) => void>();

/** The directory, read once per page load (a failed read is retried on the next call). */
export function loadDirectory(me: Me): Promise<Directory> {
  directory ??= load(me).catch(() => {
    directory = undefined;
    const dir: Directory = new Map();
    const self = selfEntry(me);
    if (self.id) dir.set(self.id, self);
    return dir;
  });
  return directory;
}

/** After a change to people, service accounts or keys: read them again and tell every page. */
export function refreshDirectory(me: Me): void {
  directory = undefined;
  void loadDirectory(me).then((d) => {
    for (const l of listeners) l(d);
  });
}

export function useDirectory(me: Me): Directory | undefined {
  const [dir, setDir] = useState<Directory | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void loadDirectory(me).then((d) => live && setDir(d));
    listeners.add(setDir);
    return () => {
      live = false;
      listeners.delete(setDir);
    };
  }, [me]);
  return dir;
}

/**
 * A principal or key by name: the directory's name, else the name the service gave with the
 * id (`fallback`), else a short form of the id. The full id is the title, for a hover or a copy.
 */
export function Name({ id, dir, fallback }: { id: string | null | undefined; dir: Directory | undefined; fallback?: string | null | undefined }) {
  if (!id) return <span class="muted">—</span>;
  const name = dir?.get(id)?.name ?? givenName(fallback, id) ?? (id.includes('_') ? idTail(id) : id);
  return (
    <span class="principal" title={id}>
      {name}
    </span>
  );
}

export function nameOf(id: string, dir: Directory | undefined, fallback?: string | null): string {
  return dir?.get(id)?.name ?? givenName(fallback, id) ?? (id.includes('_') ? idTail(id) : id);
}
