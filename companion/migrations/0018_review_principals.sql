-- 0018: the reviewer is the authenticated principal (companion/reviews/reviewer.ts). Every
-- review receipt records the principal behind the credential (or, for a signed route callback,
-- the platform user it names) and the person the decision counts as; identities on chat and
-- workflow platforms are linked to people, so a callback maps to a person.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- A person's identity on a platform that posts review callbacks: provider `slack:<team_id>`
-- or `servicenow:<instance>`, subject the platform's user id (Slack user.id, ServiceNow
-- sys_user sys_id). One person per identity in a tenant.
CREATE TABLE person_identities (
  id         TEXT PRIMARY KEY,                       -- idn_<ULID>
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  person_id  TEXT NOT NULL REFERENCES people (id),
  provider   TEXT NOT NULL,
  subject    TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (tenant_id, provider, subject)
) STRICT;

CREATE INDEX person_identities_by_person ON person_identities (tenant_id, person_id, id);

-- Who decided, beside the spec's reviewer string (null on receipts sealed before this
-- migration and on expiry receipts):
--   principal_id     the principal behind the credential (per_… or sva_…); null for a callback
--   principal_name   its display name when the receipt was sealed
--   counts_as        the person the decision counts as: the principal itself when it is a person
--                    reviewing as themselves, or the person a delegated identity maps to; null
--                    for an unmapped delegated identity or a service account as itself
--   counts_as_name   that person's display name
--   asserted         1 when the reviewer was named by someone else (delegation or a callback)
--   asserted_route   the review route of a callback (<channel>:<target>)
--   identity_provider, identity_subject   the platform user a callback named
ALTER TABLE review_receipts ADD COLUMN principal_id TEXT;
ALTER TABLE review_receipts ADD COLUMN principal_name TEXT;
ALTER TABLE review_receipts ADD COLUMN counts_as TEXT;
ALTER TABLE review_receipts ADD COLUMN counts_as_name TEXT;
ALTER TABLE review_receipts ADD COLUMN asserted INTEGER NOT NULL DEFAULT 0 CHECK (asserted IN (0, 1));
ALTER TABLE review_receipts ADD COLUMN asserted_route TEXT;
ALTER TABLE review_receipts ADD COLUMN identity_provider TEXT;
ALTER TABLE review_receipts ADD COLUMN identity_subject TEXT;
-- A person who made an approval with their own credential (as themselves or naming another).
ALTER TABLE review_receipts ADD COLUMN principal_person_id TEXT;

-- N-of-M counts distinct people: one approval per person an approval counts as, and one per
-- person acting through their own credential, under any interleaving.
CREATE UNIQUE INDEX review_receipts_one_approval_per_person ON review_receipts (tenant_id, reviewed_action_key, counts_as)
  WHERE decision = 'approved' AND counts_as IS NOT NULL;
CREATE UNIQUE INDEX review_receipts_one_approval_per_acting_person ON review_receipts (tenant_id, reviewed_action_key, principal_person_id)
  WHERE decision = 'approved' AND principal_person_id IS NOT NULL;
