-- 0004: reviews (reserved for the reviews capability; filled in by its change).
SELECT 1;
