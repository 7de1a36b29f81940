/**
 * What the integrations capability needs from storage (SQLite: ./sqlite-store.ts). One row per
 * (tenant, channel, target); the channel's config is JSON validated by that channel's schema.
 * Reads take the tenant id from the credential (interface-spec Authentication 6).
 */

export interface IntegrationRow {
  tenantId: string;
  channel: string;
  target: string;
  enabled: boolean;
  /** JSON text. */
  config: string;
  secretRef: string | null;
  createdAt: string;
  updatedAt: string;
  consecutiveFailures: number;
  failingSince: string | null;
  /** Set when the service disabled the target after sustained failure. */
  disabledAt: string | null;
  disabledReason: string | null;
}

export interface SaveIntegration {
  tenantId: string;
  channel: string;
  target: string;
  enabled: boolean;
  config: string;
  secretRef: string | null;
  at: string;
}

export interface IntegrationStore {
  find(tenantId: string, channel: string, target: string): Promise<IntegrationRow | undefined>;
  list(tenantId: string): Promise<IntegrationRow[]>;
  /** Creates or replaces the setup. Saving it enabled clears a service-side disable. */
  save(row: SaveIntegration): Promise<void>;
  /** A send succeeded: the failure streak ends. */
  recordSuccess(tenantId: string, channel: string, target: string): Promise<void>;
  /** A send failed: returns the streak so far. */
  recordFailure(tenantId: string, channel: string, target: string, at: string): Promise<{ consecutiveFailures: number; failingSince: string }>;
  disable(tenantId: string, channel: string, target: string, at: string, reason: string): Promise<void>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Route setups per (tenant, channel, target) and their delivery health (integrations capability). */
    readonly integrations: IntegrationStore;
  }
}
