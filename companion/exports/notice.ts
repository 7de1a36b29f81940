/**
 * interface-spec "What the service does" 6: exports are read models for owner review. Every
 * export repeats it, in its body or (for NDJSON) in a header, so a document forwarded on its
 * own still says what it is not.
 */
export const OWNER_REVIEW_NOTICE =
  'For owner review only. This export is evidence and routing data; it is not an authorization decision, an official approval, or a certification of compliance.';

/** The header carrying the notice where the body has no room for it (NDJSON). */
export const NOTICE_HEADER = 'x-service-export-notice';
