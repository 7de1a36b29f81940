/**
 * The page-world half of the content script (Chrome "world: MAIN", Firefox 128+): it runs in
 * the page's own JavaScript world at document_start, before any page script, so it sees what
 * the isolated content script cannot: the requests the page itself makes. Each request that
 * carries a body (fetch or XHR with a body, WebSocket send, sendBeacon) is announced with a DOM
 * event the content script counts, as evidence that a released action was really sent
 * (utils/content/gate-flow.ts). Nothing about the request (URL, body) is passed on.
 *
 * Why a manifest "world: MAIN" content script rather than an unlisted script injected with a
 * <script src> element: the browser runs the manifest entry before the page's first script,
 * whereas an injected element loads asynchronously, so a page's early inline scripts could
 * already hold a reference to the real fetch and send unseen.
 *
 * A page can forge this event; it can also simply send what it likes, so the event only ever
 * turns "not sent" into "sent" for a release the page already received.
 */
import { defineContentScript } from 'wxt/utils/define-content-script';
import { AI_SITE_MATCHES } from '../utils/adapters/hosts.ts';
import { PAGE_REQUEST_EVENT } from '../utils/content/page-requests.ts';

export default defineContentScript({
  matches: [...AI_SITE_MATCHES],
  runAt: 'document_start',
  world: 'MAIN',
  main() {
    const announce = () => document.dispatchEvent(new CustomEvent(PAGE_REQUEST_EVENT));

    const fetch = window.fetch;
    window.fetch = function (this: unknown, input: RequestInfo | URL, init?: RequestInit) {
      if (init?.body != null || (input instanceof Request && input.method !== 'GET' && input.method !== 'HEAD')) announce();
      return fetch.call(this, input, init);
    } as typeof window.fetch;

    const xhrSend = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.send = function (this: XMLHttpRequest, body?: Document | XMLHttpRequestBodyInit | null) {
      if (body != null) announce();
      return xhrSend.call(this, body);
    };

    const wsSend = WebSocket.prototype.send;
    WebSocket.prototype.send = function (this: WebSocket, data: string | ArrayBufferLike | Blob | ArrayBufferView) {
      announce();
      return wsSend.call(this, data);
    };

    const beacon = navigator.sendBeacon?.bind(navigator);
    if (beacon) {
      navigator.sendBeacon = (url: string | URL, data?: BodyInit | null) => {
        announce();
        return beacon(url, data);
      };
    }
  },
});
