-- 0009 for PostgreSQL: ../0009_route_dispatches.sql (review route dispatches and accepted
-- callback signatures). Conventions: ./0001_tenants.sql.

CREATE TABLE route_dispatches (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants (id),
  action_key       text NOT NULL,
  channel          text NOT NULL CHECK (channel IN ('chat', 'workflow', 'webhook')),
  target           text NOT NULL,
  body             text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'dead')),
  prepared_at      text,
  attempt_count    bigint NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
  run_at           bigint NOT NULL,
  lease_owner      text,
  lease_expires_at bigint,
  last_error       text,
  last_attempt_at  text,
  created_at       text NOT NULL,
  completed_at     text,
  resolved_at      text,
  resolution       text,
  UNIQUE (tenant_id, action_key),
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);
CREATE INDEX route_dispatches_due ON route_dispatches (run_at) WHERE status IN ('pending', 'failed') AND resolved_at IS NULL;
CREATE INDEX route_dispatches_by_tenant ON route_dispatches (tenant_id, id);

CREATE TABLE route_callback_signatures (
  tenant_id      text NOT NULL,
  signature_hash text NOT NULL CHECK (length(signature_hash) = 64),
  received_at    text NOT NULL,
  PRIMARY KEY (tenant_id, signature_hash)
);
