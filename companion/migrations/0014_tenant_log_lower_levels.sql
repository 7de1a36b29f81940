-- A tenant log's four lowest Merkle levels are computed from its records' attestation hashes
-- (anchoring/sqlite-store.ts TENANT_LOG_UNSTORED_LEVELS): the rows an older version stored for
-- them repeat what sealed_records holds. The epoch log ("#epochs") keeps every level.
DELETE FROM merkle_nodes WHERE level < 4 AND log_id NOT LIKE '#%';
