/**
 * What a channel (webhook now; chat and workflow later) plugs into the generic integration
 * routes: its config schema, the checks a setup must pass, the rows it writes beside the
 * saved setup, and how ready a saved setup is. Channels are handed to `integrationRoutes` by
 * app.ts, so this capability never imports the capabilities that implement them.
 */
import type { FieldError } from '../core/errors.ts';
import type { z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import type { Tx } from '../core/stores.ts';
import type { IntegrationRow } from './store.ts';

/** PUT /tenant/integrations/{channel}/{target} body, after the channel's config schema. */
export interface IntegrationInput<Config> {
  enabled: boolean;
  config: Config;
  secret_ref?: string | null | undefined;
  rotate_signing_secret?: boolean | undefined;
}

export interface ChannelContext {
  deps: RouteDeps;
  tenantId: string;
  target: string;
  /** The stored setup before this request, if any. */
  existing: IntegrationRow | undefined;
  now: Date;
}

export type ReadinessState = 'disabled' | 'auto_disabled' | 'incomplete' | 'waiting_on_secret' | 'ready';

export interface Readiness {
  state: ReadinessState;
  detail: string;
  [extra: string]: unknown;
}

export interface IntegrationChannel<Config = unknown> {
  readonly name: string;
  readonly config: z.ZodType<Config>;
  /** Checks beyond the schema; every failing field, as body field errors. */
  check(ctx: ChannelContext, input: IntegrationInput<Config>): FieldError[];
  /**
   * Runs in the save transaction after the setup row is written, writing through its `tx`;
   * returns extra response members (a secret shown once). Throwing rolls the whole save back.
   */
  saved(ctx: ChannelContext, input: IntegrationInput<Config>, tx: Tx): Promise<Record<string, unknown>>;
  /** How a saved setup stands, for readiness and the PUT answer. */
  readiness(deps: RouteDeps, row: IntegrationRow): Promise<Readiness>;
}
