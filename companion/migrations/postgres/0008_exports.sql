-- 0008 for PostgreSQL: ../0008_exports.sql (validation schema bindings and hash-only validation
-- runs). Conventions: ./0001_tenants.sql.

CREATE TABLE validation_schema_bindings (
  binding_key        text PRIMARY KEY,
  tenant_id          text NOT NULL REFERENCES tenants (id),
  export_kind        text NOT NULL,
  adapter_key        text NOT NULL,
  schema_profile_key text NOT NULL,
  schema_digest      text NOT NULL CHECK (length(schema_digest) = 64),
  binding_digest     text NOT NULL CHECK (length(binding_digest) = 64),
  active             bigint NOT NULL CHECK (active IN (0, 1)),
  created_at         text NOT NULL,
  superseded_at      text,
  CHECK ((active = 1) = (superseded_at IS NULL))
);

CREATE UNIQUE INDEX validation_schema_bindings_active
  ON validation_schema_bindings (tenant_id, export_kind, adapter_key) WHERE active = 1;
CREATE INDEX validation_schema_bindings_by_tenant ON validation_schema_bindings (tenant_id, created_at);

CREATE TABLE validation_runs (
  run_key            text PRIMARY KEY,
  tenant_id          text NOT NULL REFERENCES tenants (id),
  export_kind        text NOT NULL,
  adapter_key        text NOT NULL,
  binding_key        text REFERENCES validation_schema_bindings (binding_key),
  schema_profile_key text NOT NULL,
  schema_digest      text NOT NULL CHECK (length(schema_digest) = 64),
  export_digest      text NOT NULL CHECK (length(export_digest) = 64),
  validation_status  text NOT NULL CHECK (validation_status IN ('passed', 'failed')),
  error_count        bigint NOT NULL CHECK (error_count >= 0),
  created_at         text NOT NULL,
  CHECK ((validation_status = 'passed') = (error_count = 0))
);

CREATE INDEX validation_runs_by_tenant ON validation_runs (tenant_id, run_key);
