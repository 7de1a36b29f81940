-- 0008: export validation (interface-spec "What the service does" 6, Endpoints "Tenant
-- exports"): schema bindings and validation runs, both hash-only receipts. No export content
-- is ever stored here: a run keeps the digest of the document it judged, the digest of the
-- schema profile that judged it, the result and the error count.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- Which pinned schema profile judges a tenant's export of a kind, produced by which adapter.
-- Recording a binding supersedes the active one for the same (export_kind, adapter_key).
CREATE TABLE validation_schema_bindings (
  binding_key        TEXT PRIMARY KEY,             -- vsb_<ULID>
  tenant_id          TEXT NOT NULL REFERENCES tenants (id),
  export_kind        TEXT NOT NULL,
  adapter_key        TEXT NOT NULL,
  schema_profile_key TEXT NOT NULL,
  schema_digest      TEXT NOT NULL CHECK (length(schema_digest) = 64),
  binding_digest     TEXT NOT NULL CHECK (length(binding_digest) = 64),
  active             INTEGER NOT NULL CHECK (active IN (0, 1)),
  created_at         TEXT NOT NULL,
  superseded_at      TEXT,
  CHECK ((active = 1) = (superseded_at IS NULL))
) STRICT;

-- At most one active binding per export kind and adapter: a constraint, not a hope.
CREATE UNIQUE INDEX validation_schema_bindings_active
  ON validation_schema_bindings (tenant_id, export_kind, adapter_key) WHERE active = 1;
CREATE INDEX validation_schema_bindings_by_tenant ON validation_schema_bindings (tenant_id, created_at);

-- One local preflight of an export against a pinned profile.
CREATE TABLE validation_runs (
  run_key            TEXT PRIMARY KEY,             -- vrun_<ULID>, sorts by creation
  tenant_id          TEXT NOT NULL REFERENCES tenants (id),
  export_kind        TEXT NOT NULL,
  adapter_key        TEXT NOT NULL,
  binding_key        TEXT REFERENCES validation_schema_bindings (binding_key),
  schema_profile_key TEXT NOT NULL,
  schema_digest      TEXT NOT NULL CHECK (length(schema_digest) = 64),
  export_digest      TEXT NOT NULL CHECK (length(export_digest) = 64),
  validation_status  TEXT NOT NULL CHECK (validation_status IN ('passed', 'failed')),
  error_count        INTEGER NOT NULL CHECK (error_count >= 0),
  created_at         TEXT NOT NULL,
  CHECK ((validation_status = 'passed') = (error_count = 0))
) STRICT;

CREATE INDEX validation_runs_by_tenant ON validation_runs (tenant_id, run_key);
