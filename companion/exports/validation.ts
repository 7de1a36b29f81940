/**
 * Schema bindings and validation runs (interface-spec What the service does 6: "Schema
 * bindings and validation runs store hash-only receipts").
 *
 * A binding says which pinned schema profile judges a tenant's export of a kind, as produced
 * by which adapter (the document builder). A run builds the export now, preflights it locally
 * with ajv against the profile's pinned schemas and stores a receipt: export digest, schema
 * digest, result and error count. The export itself and the error details are returned to the
 * caller once and never stored: the receipt proves what was judged without keeping it.
 */
import { canonicalize } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { rfc3339 } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import type { DocumentContext, DocumentKind } from './documents.ts';
import { DOCUMENT_KINDS, buildDocument, exportDigest } from './documents.ts';
import type { SchemaProfile, SchemaViolation } from './schema-profiles.ts';
import { defaultProfileFor, findProfile, profileDigest, validateAgainst } from './schema-profiles.ts';
import type { BindingRow, RunRow } from './store.ts';

/** Violations returned with a run (the count is always complete). */
export const MAX_REPORTED_VIOLATIONS = 50;

export interface BindingRequest {
  export_kind: string;
  schema_profile_key?: string | undefined;
  adapter_key?: string | undefined;
}

export interface BindingPlan {
  row: Omit<BindingRow, 'bindingKey' | 'createdAt'>;
  supersedes: string | null;
}

/** Checks a binding request against the profiles; every failing field is listed at once. */
export async function planBinding(ctx: DocumentContext, body: BindingRequest): Promise<BindingPlan> {
  const errors: { in: 'body'; path: string; message: string; code: string }[] = [];
  const kind = body.export_kind;
  const profile = body.schema_profile_key !== undefined ? findProfile(body.schema_profile_key) : isDocumentKind(kind) ? defaultProfileFor(kind) : undefined;
  if (body.schema_profile_key !== undefined && !profile) {
    errors.push({ in: 'body', path: '/schema_profile_key', message: `unknown schema profile ${JSON.stringify(body.schema_profile_key)}`, code: 'unknown_profile' });
  } else if (!profile) {
    errors.push({ in: 'body', path: '/export_kind', message: `no official schema profile judges export kind ${JSON.stringify(kind)}`, code: 'no_schema_profile' });
  } else if (profile.exportKind !== kind) {
    errors.push({ in: 'body', path: '/export_kind', message: `profile ${profile.key} judges ${profile.exportKind} exports, not ${kind}`, code: 'profile_mismatch' });
  }
  if (profile && body.adapter_key !== undefined && body.adapter_key !== profile.adapterKey) {
    errors.push({ in: 'body', path: '/adapter_key', message: `profile ${profile.key} validates documents of adapter ${profile.adapterKey}`, code: 'adapter_mismatch' });
  }
  if (errors.length > 0 || !profile) throw ProblemError.validation(errors);
  const schemaDigest = profileDigest(profile);
  const bindingDigest = sha256Hex(canonicalize({ export_kind: kind, adapter_key: profile.adapterKey, schema_profile_key: profile.key, schema_digest: schemaDigest }));
  const current = await ctx.deps.store.exports.activeBinding(ctx.tenantId, kind, profile.adapterKey);
  return {
    row: { tenantId: ctx.tenantId, exportKind: kind, adapterKey: profile.adapterKey, schemaProfileKey: profile.key, schemaDigest, bindingDigest, active: true, supersededAt: null },
    supersedes: current?.bindingKey ?? null,
  };
}

/**
 * Records a binding; the active one for the same kind and adapter is superseded in the same
 * transaction. Two companions binding the same kind at once both read the same active binding;
 * the unique index on active bindings refuses the later insert, and that one starts over from
 * the binding that won (a few times at most).
 */
export async function recordBinding(ctx: DocumentContext, plan: BindingPlan): Promise<BindingRow> {
  const { deps } = ctx;
  const at = rfc3339(deps.clock.now());
  const row: BindingRow = { ...plan.row, bindingKey: deps.ids.next('vsb'), createdAt: at };
  for (let attempt = 1; ; attempt++) {
    let seen: string | undefined;
    try {
      await deps.store.transaction(async (tx) => {
        const current = await tx.exports.activeBinding(ctx.tenantId, row.exportKind, row.adapterKey);
        seen = current?.bindingKey;
        if (current) await tx.exports.supersedeBinding(ctx.tenantId, current.bindingKey, at);
        await tx.exports.insertBinding(row);
      });
      return row;
    } catch (err) {
      const now = await deps.store.exports.activeBinding(ctx.tenantId, row.exportKind, row.adapterKey);
      if (attempt >= 3 || now?.bindingKey === seen) throw err;
    }
  }
}

export interface RunRequest {
  export_kind: string;
  binding_key?: string | undefined;
}

export interface RunOutcome {
  run: RunRow;
  violations: SchemaViolation[];
}

/** Builds the export, validates it against the bound (or default) profile, stores the hash-only receipt. */
export async function runValidation(ctx: DocumentContext, body: RunRequest): Promise<RunOutcome> {
  const { deps, tenantId } = ctx;
  const kind = body.export_kind;
  let binding: BindingRow | undefined;
  if (body.binding_key !== undefined) {
    binding = await deps.store.exports.findBinding(tenantId, body.binding_key);
    if (!binding) throw ProblemError.notFound(`no schema binding ${body.binding_key} for this tenant`);
    if (binding.exportKind !== kind) {
      throw ProblemError.validation([{ in: 'body', path: '/binding_key', message: `binding ${binding.bindingKey} is for ${binding.exportKind} exports, not ${kind}`, code: 'binding_mismatch' }]);
    }
  }
  const profile = await resolveProfile(ctx, kind, binding);
  if (!profile || !isDocumentKind(kind)) {
    throw ProblemError.validation([{ in: 'body', path: '/export_kind', message: `no official schema profile judges export kind ${JSON.stringify(kind)}`, code: 'no_schema_profile' }]);
  }
  const document = await buildDocument(kind, ctx);
  const result = validateAgainst(profile, document);
  const run: RunRow = {
    runKey: deps.ids.next('vrun'),
    tenantId,
    exportKind: kind,
    adapterKey: profile.adapterKey,
    bindingKey: binding?.bindingKey ?? null,
    schemaProfileKey: profile.key,
    schemaDigest: profileDigest(profile),
    exportDigest: exportDigest(document),
    validationStatus: result.valid ? 'passed' : 'failed',
    errorCount: result.errors.length,
    createdAt: rfc3339(deps.clock.now()),
  };
  await deps.store.exports.insertRun(run);
  return { run, violations: result.errors.slice(0, MAX_REPORTED_VIOLATIONS) };
}

/** The explicit binding, else the tenant's active binding for the kind, else the kind's default profile. */
async function resolveProfile(ctx: DocumentContext, kind: string, binding: BindingRow | undefined): Promise<SchemaProfile | undefined> {
  if (binding) return findProfile(binding.schemaProfileKey);
  const fallback = isDocumentKind(kind) ? defaultProfileFor(kind) : undefined;
  if (!fallback) return undefined;
  const active = await ctx.deps.store.exports.activeBinding(ctx.tenantId, kind, fallback.adapterKey);
  return active ? findProfile(active.schemaProfileKey) : fallback;
}

export function isDocumentKind(kind: string): kind is DocumentKind {
  return (DOCUMENT_KINDS as readonly string[]).includes(kind);
}

export function bindingView(row: BindingRow): Record<string, unknown> {
  return {
    binding_key: row.bindingKey,
    export_kind: row.exportKind,
    adapter_key: row.adapterKey,
    schema_profile_key: row.schemaProfileKey,
    schema_digest: row.schemaDigest,
    binding_digest: row.bindingDigest,
    active: row.active,
    created_at: row.createdAt,
    superseded_at: row.supersededAt,
  };
}

export function runView(row: RunRow): Record<string, unknown> {
  return {
    run_key: row.runKey,
    export_kind: row.exportKind,
    adapter_key: row.adapterKey,
    binding_key: row.bindingKey,
    schema_profile_key: row.schemaProfileKey,
    schema_digest: row.schemaDigest,
    export_digest: row.exportDigest,
    validation_status: row.validationStatus,
    error_count: row.errorCount,
    created_at: row.createdAt,
  };
}
