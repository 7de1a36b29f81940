/**
 * Requests the page made, as the page-world script (entrypoints/page-world.content.ts) announces
 * them: only a count, read as evidence that a release was sent.
 */
export const PAGE_REQUEST_EVENT = 'action-gate:page-request';

export function countPageRequests(doc: Document): { count: () => number; stop: () => void } {
  let n = 0;
  const onRequest = () => void n++;
  doc.addEventListener(PAGE_REQUEST_EVENT, onRequest);
  return { count: () => n, stop: () => doc.removeEventListener(PAGE_REQUEST_EVENT, onRequest) };
}
