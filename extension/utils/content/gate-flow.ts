/**
 * One held action from hold to outcome (issue 5, item 3), in the page's content script:
 *   allow          → release the original action exactly once;
 *   blocked        → a notice with next_step, nothing sent, the text left in the composer;
 *   needs_review   → "paused until review" until the review decides: approved releases,
 *                    rejected blocks, escalated stays paused; the employee may withdraw;
 *   no usable answer → fail closed (or open, if the admin chose so; the background logs it).
 *
 * The raw text never leaves the tab: the background gets it redacted, with its SHA-256.
 * Release is guarded three times: one attempt is released at most once here; the text must
 * still be the one that was gated; and the background hands out a release once per action
 * (DecisionLog.claimRelease), so a restarted service worker or a repeated answer cannot send
 * twice.
 */
import { utf8 } from '../../../shared/encoding.ts';
import { sha256Hex } from '../../../shared/hash.ts';
import type { SiteAdapter } from '../adapters/definitions.ts';
import type { Dialog } from '../../components/gate-dialog.tsx';
import { MessageError } from '../messages.ts';
import type { GateOutcome, GateSubmit, MessageType, RequestOf, ResponseOf, ReviewState } from '../messages.ts';
import { redact } from '../redact.ts';
import { composerText, conversationOf, releaseHeldAction } from './dom.ts';

export interface GateUi {
  show(dialog: Dialog): void;
  hide(): void;
}

export interface GateFlowDeps {
  adapter: SiteAdapter;
  ui: GateUi;
  send: <K extends MessageType>(type: K, payload: RequestOf<K>) => Promise<ResponseOf<K>>;
  bypass: (dispatch: () => void) => void;
  location: Location;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  newId: () => string;
  /** How often a paused action asks for its review (content-script side; a few requests a minute). */
  pollMs?: number;
}

interface Attempt {
  id: string;
  composer: HTMLElement;
  textHash: string;
  submit: GateSubmit;
  released: boolean;
  /** Set when the employee withdrew or the flow moved on: polling stops. */
  over: boolean;
}

/** Messages a restarting service worker may drop; the same attempt is simply sent again. */
const TRANSPORT_RETRIES = 4;
/** A usual answer takes tens of milliseconds: say "checking" only when it takes longer. */
const CHECKING_DELAY_MS = 400;

export class GateFlow {
  private current: Attempt | null = null;
  /** The paused action's key per attempt, for withdrawing it. */
  private readonly actionKeys = new Map<string, string>();

  constructor(private readonly deps: GateFlowDeps) {}

  /** True while an action is held (being gated or paused for review). */
  busy(): boolean {
    return this.current !== null && !this.current.over;
  }

  /** A send was held by the interceptor. */
  async held(composer: HTMLElement): Promise<void> {
    if (this.busy()) return; // one held action at a time; the dialog is already showing
    const text = composerText(composer);
    if (text.trim() === '') return; // nothing to send, nothing to gate
    const { text: redacted, counts } = redact(text);
    const textHash = sha256Hex(utf8(text));
    const id = this.deps.newId();
    const attempt: Attempt = {
      id,
      composer,
      textHash,
      released: false,
      over: false,
      submit: {
        attempt_id: id,
        adapter: this.deps.adapter.id,
        conversation: conversationOf(this.deps.adapter, this.deps.location),
        redacted_text: redacted,
        redactions: counts as Record<string, number>,
        text_sha256: textHash,
        chars: [...text].length,
      },
    };
    this.current = attempt;
    await this.gate(attempt);
  }

  /** "Try again" after a failure: the same attempt, so the gate meters it once (idempotency_key). */
  async retry(): Promise<void> {
    const attempt = this.current;
    if (!attempt || attempt.released) return;
    attempt.over = false;
    await this.gate(attempt);
  }

  async withdraw(): Promise<void> {
    const attempt = this.current;
    if (!attempt || attempt.released) return;
    attempt.over = true;
    this.deps.ui.hide();
    const key = this.actionKeys.get(attempt.id);
    if (key) await this.deps.send('review.withdraw', { action_key: key }).catch(() => undefined);
  }

  close(): void {
    if (this.current) this.current.over = true;
    this.deps.ui.hide();
  }

  private async gate(attempt: Attempt): Promise<void> {
    const site = this.deps.adapter.label;
    let answered = false;
    void this.deps.sleep(CHECKING_DELAY_MS).then(() => {
      if (!answered && !attempt.over) this.deps.ui.show({ kind: 'checking', site });
    });
    let outcome: GateOutcome;
    try {
      outcome = await this.withRetries(() => this.deps.send('gate.submit', attempt.submit));
      answered = true;
    } catch (e) {
      answered = true;
      attempt.over = true;
      this.deps.ui.show({ kind: 'failed', message: `Action Gate could not be asked (${e instanceof Error ? e.message : String(e)}). Nothing was sent.` });
      return;
    }
    if (attempt.over && outcome.action !== 'fail-closed') return; // withdrawn meanwhile

    switch (outcome.action) {
      case 'release':
        attempt.over = true;
        this.deps.ui.hide();
        this.release(attempt);
        return;
      case 'fail-open':
        attempt.over = true;
        this.release(attempt);
        this.deps.ui.show({ kind: 'fail-open', message: outcome.message });
        return;
      case 'fail-closed':
        attempt.over = true;
        this.deps.ui.show({ kind: 'failed', message: outcome.message });
        return;
      case 'block':
        attempt.over = true;
        this.deps.ui.show({ kind: 'blocked', action_key: outcome.action_key, next_step: outcome.next_step, verification: outcome.verification });
        return;
      case 'review':
        this.actionKeys.set(attempt.id, outcome.action_key);
        await this.awaitReview(attempt, outcome);
        return;
    }
  }

  private async awaitReview(attempt: Attempt, outcome: Extract<GateOutcome, { action: 'review' }>): Promise<void> {
    const paused: Extract<Dialog, { kind: 'review' }> = {
      kind: 'review',
      site: this.deps.adapter.label,
      action_key: outcome.action_key,
      review_route: outcome.review_route,
      next_step: outcome.next_step,
      status: 'pending',
      verification: outcome.verification,
      paused_at: this.deps.now(),
      problem: null,
    };
    this.deps.ui.show(paused);
    const pollMs = this.deps.pollMs ?? 1000;
    while (!attempt.over) {
      await this.deps.sleep(pollMs);
      if (attempt.over) return;
      let state: ReviewState;
      try {
        state = await this.withRetries(() => this.deps.send('review.status', { action_key: outcome.action_key, attempt_id: attempt.id }));
      } catch (e) {
        // Still paused: the review may be decided while the companion is briefly away.
        this.deps.ui.show({ ...paused, problem: `Cannot reach Action Gate right now (${e instanceof Error ? e.message : String(e)}); still paused.` });
        continue;
      }
      if (attempt.over) return;
      switch (state.status) {
        case 'approved':
          attempt.over = true;
          if (state.release && this.release(attempt)) {
            this.deps.ui.show({ kind: 'approved', action_key: outcome.action_key, reviewer: state.reviewer, verification: state.verification });
          } else if (!state.release) {
            this.deps.ui.show({ kind: 'rejected', action_key: outcome.action_key, reviewer: state.reviewer, status: 'approved', verification: state.verification, problem: state.problem ?? 'Approved, but not sent.' });
          }
          return;
        case 'rejected':
        case 'expired':
        case 'withdrawn':
          attempt.over = true;
          this.deps.ui.show({ kind: 'rejected', action_key: outcome.action_key, reviewer: state.reviewer, status: state.status, verification: state.verification, problem: state.problem });
          return;
        default:
          this.deps.ui.show({ ...paused, status: state.status === 'escalated' ? 'escalated' : 'pending', problem: state.problem });
      }
    }
  }

  /** Lets the held action through once, and only with the text that was gated. */
  private release(attempt: Attempt): boolean {
    if (attempt.released) return false;
    if (sha256Hex(utf8(composerText(attempt.composer))) !== attempt.textHash) {
      this.deps.ui.show({ kind: 'notice', title: 'Not sent: the text changed', message: 'The text in the composer is not the text that was checked. Send it again to have it checked.' });
      return false;
    }
    attempt.released = true;
    const how = releaseHeldAction(this.deps.adapter, attempt.composer, this.deps.bypass);
    if (how === null) {
      this.deps.ui.show({ kind: 'notice', title: 'Allowed, but not sent', message: `Action Gate could not find ${this.deps.adapter.label}’s send control. Send the message yourself.` });
      return false;
    }
    return true;
  }

  /**
   * Sends a message, again on a transport failure (a stopped service worker drops the channel
   * while it restarts). A handler's own error (MessageError) is an answer, not retried.
   */
  private async withRetries<T>(call: () => Promise<T>): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await call();
      } catch (e) {
        if (e instanceof MessageError || i >= TRANSPORT_RETRIES) throw e;
        await this.deps.sleep(200 * (i + 1));
      }
    }
  }
}
