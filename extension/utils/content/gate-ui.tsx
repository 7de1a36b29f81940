/**
 * Mounts the in-page dialog in a shadow root (WXT createShadowRootUi, position "modal"), so the
 * page's styles and scripts do not reach into it and it covers the page while an action is held.
 * Mounted on first use and removed when hidden.
 */
import { render } from 'preact';
import type { ContentScriptContext } from 'wxt/utils/content-script-context';
import { createShadowRootUi } from 'wxt/utils/content-script-ui/shadow-root';
import type { ShadowRootContentScriptUi } from 'wxt/utils/content-script-ui/shadow-root';
import { GateDialog } from '../../components/gate-dialog.tsx';
import dialogCss from '../../components/gate-dialog.css?inline';
import type { Dialog, DialogActions } from '../../components/gate-dialog.tsx';
import type { GateUi } from './gate-flow.ts';

export class ShadowGateUi implements GateUi {
  private ui: Promise<ShadowRootContentScriptUi<HTMLElement>> | null = null;
  private dialog: Dialog | null = null;
  private ticker: number | null = null;
  actions: DialogActions = { onClose: () => this.hide(), onWithdraw: () => this.hide(), onRetry: () => this.hide(), onPaste: () => this.hide() };

  constructor(private readonly ctx: ContentScriptContext) {}

  show(dialog: Dialog): void {
    this.dialog = dialog;
    void this.mounted().then((container) => this.draw(container));
    // The "waiting" age in the review dialog moves on by itself.
    if (dialog.kind === 'review' && this.ticker === null) this.ticker = this.ctx.setInterval(() => this.redraw(), 1000);
    if (dialog.kind !== 'review') this.stopTicker();
  }

  hide(): void {
    this.dialog = null;
    this.stopTicker();
    const ui = this.ui;
    this.ui = null;
    void ui?.then((u) => u.remove());
  }

  private stopTicker(): void {
    if (this.ticker !== null) clearInterval(this.ticker);
    this.ticker = null;
  }

  private redraw(): void {
    void this.ui?.then((u) => this.draw(u.mounted!));
  }

  private draw(container: HTMLElement): void {
    if (this.dialog === null) return;
    render(<GateDialog dialog={this.dialog} actions={this.actions} now={Date.now()} />, container);
  }

  private mounted(): Promise<HTMLElement> {
    this.ui ??= createShadowRootUi<HTMLElement>(this.ctx, {
      name: 'action-gate-dialog',
      position: 'modal',
      zIndex: 2147483647,
      isolateEvents: true,
      css: dialogCss,
      onMount: (container) => container,
      onRemove: (container) => {
        if (container) render(null, container);
      },
    }).then((ui) => {
      ui.mount();
      return ui;
    });
    return this.ui.then((u) => u.mounted!);
  }
}
