-- 0018 for PostgreSQL: ../0018_review_principals.sql (linked platform identities of people;
-- the principal and the person each review receipt counts as). Conventions: ./0001_tenants.sql.

CREATE TABLE person_identities (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants (id),
  person_id  text NOT NULL REFERENCES people (id),
  provider   text NOT NULL,
  subject    text NOT NULL,
  created_at text NOT NULL,
  UNIQUE (tenant_id, provider, subject)
);

CREATE INDEX person_identities_by_person ON person_identities (tenant_id, person_id, id);

ALTER TABLE review_receipts ADD COLUMN principal_id text;
ALTER TABLE review_receipts ADD COLUMN principal_name text;
ALTER TABLE review_receipts ADD COLUMN counts_as text;
ALTER TABLE review_receipts ADD COLUMN counts_as_name text;
ALTER TABLE review_receipts ADD COLUMN asserted bigint NOT NULL DEFAULT 0 CHECK (asserted IN (0, 1));
ALTER TABLE review_receipts ADD COLUMN asserted_route text;
ALTER TABLE review_receipts ADD COLUMN identity_provider text;
ALTER TABLE review_receipts ADD COLUMN identity_subject text;
ALTER TABLE review_receipts ADD COLUMN principal_person_id text;

CREATE UNIQUE INDEX review_receipts_one_approval_per_person ON review_receipts (tenant_id, reviewed_action_key, counts_as)
  WHERE decision = 'approved' AND counts_as IS NOT NULL;
CREATE UNIQUE INDEX review_receipts_one_approval_per_acting_person ON review_receipts (tenant_id, reviewed_action_key, principal_person_id)
  WHERE decision = 'approved' AND principal_person_id IS NOT NULL;
