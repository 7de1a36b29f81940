/**
 * The content script on gated sites: from document_start it holds sends in
 * the capture phase, asks the background which adapter serves the page, and runs each held
 * action through the gate. Wiring only; the logic is in utils/content/.
 */
import { defineContentScript } from 'wxt/utils/define-content-script';
import { CONTENT_SCRIPT_MATCHES } from '../../utils/adapters/hosts.ts';
import type { SiteAdapter } from '../../utils/adapters/definitions.ts';
import { GateFlow } from '../../utils/content/gate-flow.ts';
import { ShadowGateUi } from '../../utils/content/gate-ui.tsx';
import { Interceptor } from '../../utils/content/interceptor.ts';
import { newAttemptId } from '../../utils/content/ids.ts';
import { countPageRequests } from '../../utils/content/page-requests.ts';
import { sendMessage } from '../../utils/messages.ts';
import type { SiteConfig } from '../../utils/messages.ts';

export default defineContentScript({
  matches: [...CONTENT_SCRIPT_MATCHES],
  runAt: 'document_start',
  // The dialog's stylesheet is passed to its shadow root as a string (gate-ui.tsx), so pages on
  // runtime-registered origins need no web-accessible CSS file.
  cssInjectionMode: 'manual',
  main(ctx) {
    let adapter: SiteAdapter | null | undefined = undefined;
    let flow: GateFlow | null = null;
    let config: SiteConfig | null = null;
    const interceptor = new Interceptor({
      adapter: () => adapter,
      held: (composer) => void flow?.held(composer),
      heldFiles: (held) => (flow ? void flow.heldFiles(held) : held.discard()),
      pastedText: (composer, text) => flow?.pasted(composer, text) ?? false,
    });
    // Synchronously, before any page script: the page's own handlers come after ours.
    ctx.onInvalidated(interceptor.install(window));
    const pageRequests = countPageRequests(document);
    ctx.onInvalidated(pageRequests.stop);

    const ui = new ShadowGateUi(ctx);
    ui.actions = {
      onClose: () => flow?.close(),
      onWithdraw: () => void flow?.withdraw(),
      onRetry: () => void flow?.retry(),
      onPaste: (redacted) => flow?.completePaste(redacted),
    };

    const ask = async (tries: number): Promise<void> => {
      try {
        config = await sendMessage('site.config', {});
        adapter = config?.adapter ?? null;
      } catch (e) {
        // The service worker may be starting; a gated site stays held meanwhile.
        if (tries > 0) return new Promise((r) => ctx.setTimeout(() => r(ask(tries - 1)), 250));
        console.warn('[action-gate] no site configuration:', e);
        adapter = null;
      }
      if (adapter) {
        flow = new GateFlow({
          adapter,
          ui,
          send: sendMessage,
          bypass: (dispatch) => interceptor.bypass(dispatch),
          location: window.location,
          sleep: (ms) => new Promise((r) => ctx.setTimeout(r, ms)),
          now: () => Date.now(),
          newId: newAttemptId,
          composers: interceptor.composers,
          pageRequests: pageRequests.count,
          pasteRules: config?.pasteRules,
        });
        // Lets an admin (and the end-to-end tests) see that the gate is active on this page.
        document.documentElement.dataset.actionGate = adapter.id;
      }
      interceptor.adapterKnown(adapter);
    };
    void ask(8);
  },
});
