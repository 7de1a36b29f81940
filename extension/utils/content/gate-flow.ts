/**
 * One held action from hold to outcome, in the page's content script:
 *   allow          → release the original action exactly once;
 *   blocked        → a notice with next_step, nothing sent, the text left in the composer;
 *   needs_review   → "paused until review" until the review decides: approved releases,
 *                    rejected blocks, escalated stays paused; the employee may withdraw;
 *   no usable answer → fail closed (or open, if the admin chose so; the background logs it).
 *
 * The raw text never leaves the tab: the background gets it redacted, with its SHA-256.
 * Release is guarded three times: one attempt is released at most once here (plus one retry
 * when the page demonstrably did not take it); the text must still be the one that was gated;
 * and the background hands out a release once per action (DecisionLog.claimRelease), so a
 * restarted service worker or a repeated answer cannot send twice.
 *
 * A release is verified: it goes to the live composer and send control (the page may have
 * re-created them while the action waited), and counts as sent only with evidence, the gated
 * text gone from the composer or a request the page made right after. Without it the person
 * is told plainly that nothing was sent.
 */
import { utf8 } from '../../../shared/encoding.ts';
import { sha256Hex } from '../../../shared/hash.ts';
import type { SiteAdapter } from '../adapters/definitions.ts';
import type { Dialog } from '../../components/gate-dialog.tsx';
import { MessageError } from '../messages.ts';
import type { FileCommitment, GateOutcome, GateSubmit, MessageType, RequestOf, ResponseOf, ReviewState } from '../messages.ts';
import { findSensitive, redact, REDACTION_REASONS } from '../redact.ts';
import type { RedactionKind } from '../redact.ts';
import type { PasteRule } from '../settings.ts';
import type { ComposerTracker } from './composers.ts';
import type { HeldFiles } from './interceptor.ts';
import { composerText, conversationOf, isVisible, releaseHeldAction } from './dom.ts';
import { newClientNonce } from './ids.ts';

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
  /** Finds the live composer at release time. */
  composers: ComposerTracker;
  /** How many requests the page has made so far (page-world observer); evidence that a release was sent. */
  pageRequests?: () => number;
  /** How often a paused action asks for its review (content-script side; a few requests a minute). */
  pollMs?: number;
  /** How long a release may take to show its evidence before it is reported as not sent. */
  confirmMs?: number;
  /** What a paste of flagged text does, per pattern class (site.config). */
  pasteRules?: Record<RedactionKind, PasteRule>;
}

/** Why a release counts as sent, or that it did not happen. */
export type ReleaseEvidence = 'composer-cleared' | 'page-request' | 'handed-to-page';
/** `retryable`: the page did not take a release that was made; the same attempt may be released once more. */
type ReleaseResult = { sent: true; evidence: ReleaseEvidence } | { sent: false; why: string; retryable: boolean };

interface Attempt {
  id: string;
  composer: HTMLElement;
  /** Set for files held on their way into the page: released by handing them over. */
  files: HeldFiles | null;
  textHash: string;
  submit: GateSubmit;
  /** How often it was let through: once, and once more only after a release the page did not take. */
  releases: number;
  /** True once a release had evidence: nothing more happens to this attempt. */
  released: boolean;
  /** The decision or approval that authorised the release, for the retry of an unconfirmed one. */
  authorised: { action_key: string; approved: boolean } | null;
  /** Set when the employee withdrew or the flow moved on: polling stops. */
  over: boolean;
}

/** Messages a restarting service worker may drop; the same attempt is simply sent again. */
const TRANSPORT_RETRIES = 4;
/** Inserts text at the composer's caret the way typing does, so the page's editor sees an input. */
function insertText(composer: HTMLElement, text: string, bypass: (dispatch: () => void) => void): void {
  composer.focus();
  if (composer.tagName === 'TEXTAREA' || composer.tagName === 'INPUT') {
    const field = composer as HTMLTextAreaElement;
    field.setRangeText(text, field.selectionStart ?? field.value.length, field.selectionEnd ?? field.value.length, 'end');
    const view = composer.ownerDocument.defaultView ?? window;
    bypass(() => field.dispatchEvent(new view.InputEvent('input', { bubbles: true, inputType: 'insertFromPaste', data: text })));
  } else {
    // Rich editors (ProseMirror, Quill) follow the browser's own insertText editing command.
    bypass(() => composer.ownerDocument.execCommand('insertText', false, text));
  }
}

/** Metadata and commitments of one file: SHA-256 of its bytes and of its name, computed here. */
async function commitFile(file: File): Promise<FileCommitment> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await file.arrayBuffer()));
  return {
    name_sha256: sha256Hex(utf8(file.name)),
    media_type: /^[\w.+-]*\/?[\w.+-]*$/.test(file.type) ? file.type.slice(0, 100) : '',
    size: file.size,
    sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join(''),
  };
}

/** How long a page may take to show that it sent (the composer clears at once on the sites we know). */
const CONFIRM_MS = 3000;
const CONFIRM_POLL_MS = 25;
/** A usual answer takes tens of milliseconds: say "checking" only when it takes longer. */
const CHECKING_DELAY_MS = 400;

const PASTE_SEVERITY: Record<PasteRule, number> = { warn: 0, redact: 1, block: 2 };

export class GateFlow {
  private current: Attempt | null = null;
  /** A paste of flagged text waiting for the person's choice. */
  private paste: { composer: HTMLElement; text: string; mode: PasteRule } | null = null;
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
    const attempt = this.newAttempt(composer, null, sha256Hex(utf8(text)), {
      redacted_text: redacted,
      redactions: counts as Record<string, number>,
      chars: [...text].length,
    });
    this.current = attempt;
    await this.gate(attempt);
  }

  /**
   * Text pasted into the composer: if the redaction rules flag any of it, it is held and shown
   * with the flagged spans highlighted and named; the admin's rule for the most severe class
   * decides what may be pasted (as it is, redacted, or nothing). Returns true when held.
   */
  pasted(composer: HTMLElement, text: string): boolean {
    const spans = findSensitive(text);
    if (spans.length === 0 || this.busy()) return false;
    const rules = this.deps.pasteRules;
    const mode = spans.map((s) => rules?.[s.kind] ?? 'warn').reduce((a, b) => (PASTE_SEVERITY[b] > PASTE_SEVERITY[a] ? b : a), 'warn' as PasteRule);
    const segments: { text: string; kind: string | null; reason: string | null }[] = [];
    let at = 0;
    for (const s of spans) {
      if (s.start > at) segments.push({ text: text.slice(at, s.start), kind: null, reason: null });
      segments.push({ text: text.slice(s.start, s.end), kind: s.kind, reason: REDACTION_REASONS[s.kind] });
      at = s.end;
    }
    if (at < text.length) segments.push({ text: text.slice(at), kind: null, reason: null });
    this.paste = { composer, text, mode };
    this.deps.ui.show({ kind: 'paste', segments, mode, reasons: [...new Set(spans.map((s) => REDACTION_REASONS[s.kind]))] });
    return true;
  }

  /** The person chose to paste the held text, redacted or (when the rule is warn) as it is. */
  completePaste(redacted: boolean): void {
    const paste = this.paste;
    this.paste = null;
    this.deps.ui.hide();
    if (!paste || paste.mode === 'block' || (!redacted && paste.mode !== 'warn')) return;
    insertText(paste.composer, redacted ? redact(paste.text).text : paste.text, this.deps.bypass);
  }

  /**
   * Files were held before the page received them: gated as their own action, with only their
   * metadata and SHA-256 commitments (computed here, in the page; the bytes never leave it).
   */
  async heldFiles(held: HeldFiles): Promise<void> {
    if (this.busy()) return held.discard(); // one held action at a time
    const files = await Promise.all(held.files.map(commitFile));
    const listHash = sha256Hex(utf8(files.map((f) => f.sha256).join('\n')));
    const fileNames = held.files.map((f) => f.name);
    const attempt = this.newAttempt(document.documentElement, held, listHash, { redacted_text: '', redactions: {}, chars: 0, files, file_names: fileNames });
    this.current = attempt;
    await this.gate(attempt);
    // Whatever did not let the files in drops them, so the page never reads them later.
    if (!attempt.released && attempt.over) held.discard();
  }

  private newAttempt(composer: HTMLElement, files: HeldFiles | null, textHash: string, content: Pick<GateSubmit, 'redacted_text' | 'redactions' | 'chars' | 'files' | 'file_names'>): Attempt {
    const id = this.deps.newId();
    return {
      id,
      composer,
      files,
      textHash,
      releases: 0,
      released: false,
      authorised: null,
      over: false,
      submit: {
        attempt_id: id,
        // Made with the attempt and kept on it: "Try again" resends this same submit.
        client_nonce: newClientNonce(),
        adapter: this.deps.adapter.id,
        conversation: conversationOf(this.deps.adapter, this.deps.location),
        text_sha256: textHash,
        ...content,
      },
    };
  }

  /**
   * "Try again" after a failure: the same attempt, so the gate meters it once (idempotency_key).
   * After a release the page did not take, the same authorisation is used for one more release.
   */
  async retry(): Promise<void> {
    const attempt = this.current;
    if (!attempt || attempt.released) return;
    if (attempt.authorised) {
      await this.releaseAndReport(attempt, attempt.authorised);
      return;
    }
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
    this.paste = null;
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
        await this.releaseAndReport(attempt, { action_key: outcome.action_key, approved: false });
        return;
      case 'fail-open': {
        attempt.over = true;
        const result = await this.release(attempt);
        this.deps.ui.show(result.sent ? { kind: 'fail-open', message: outcome.message } : { kind: 'not-sent', site: this.deps.adapter.label, message: result.why, retry: false });
        return;
      }
      case 'fail-closed':
        attempt.over = true;
        this.deps.ui.show({ kind: 'failed', message: outcome.message });
        return;
      case 'block':
        attempt.over = true;
        this.deps.ui.show({ kind: 'blocked', action_key: outcome.action_key, next_step: outcome.next_step, reasons: outcome.reasons, verification: outcome.verification, held: attempt.files ? 'files' : 'prompt' });
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
      held: attempt.files ? 'files' : 'prompt',
      action_key: outcome.action_key,
      review_route: outcome.review_route,
      next_step: outcome.next_step,
      reasons: outcome.reasons,
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
          if (state.release) {
            await this.releaseAndReport(attempt, { action_key: outcome.action_key, approved: true }, state);
          } else {
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

  /**
   * Releases an authorised attempt and tells the person what happened: sent (with evidence) or
   * not. A release the page did not take keeps its authorisation for one retry of the same
   * attempt. The background's log hears of it after the release, off the send's critical path.
   */
  private async releaseAndReport(attempt: Attempt, authorised: { action_key: string; approved: boolean }, review?: ReviewState): Promise<void> {
    attempt.authorised = authorised;
    const result = await this.release(attempt);
    if (result.sent) {
      if (authorised.approved) {
        this.deps.ui.show({ kind: 'approved', action_key: authorised.action_key, reviewer: review?.reviewer ?? null, verification: review?.verification ?? null, evidence: result.evidence });
      } else {
        this.deps.ui.hide();
      }
    } else {
      this.deps.ui.show({ kind: 'not-sent', site: this.deps.adapter.label, message: result.why, retry: result.retryable && attempt.releases < 2 });
    }
    void this.deps
      .send('release.report', { action_key: authorised.action_key, attempt_id: attempt.id, sent: result.sent, evidence: result.sent ? result.evidence : null })
      .catch(() => undefined);
  }

  /**
   * Lets the held action through, only with the text that was gated, on the live composer, and
   * waits for evidence that the page took it.
   */
  private async release(attempt: Attempt): Promise<ReleaseResult> {
    const label = this.deps.adapter.label;
    if (attempt.released || attempt.releases >= 2) return { sent: false, why: 'This action was already let through; it is not sent again.', retryable: false };
    if (attempt.files) {
      attempt.releases++;
      attempt.files.redeliver();
      attempt.released = true;
      return { sent: true, evidence: 'handed-to-page' };
    }
    const composer = this.liveComposer(attempt);
    if (composer === null) {
      return { sent: false, why: `${label}’s composer is gone, so nothing was sent. Type your message again to have it checked.`, retryable: false };
    }
    if (sha256Hex(utf8(composerText(composer))) !== attempt.textHash) {
      return { sent: false, why: 'The text in the composer is not the text that was checked, so nothing was sent. Send it again to have it checked.', retryable: false };
    }
    attempt.releases++;
    const requestsBefore = this.deps.pageRequests?.() ?? 0;
    const how = releaseHeldAction(this.deps.adapter, composer, this.deps.bypass);
    if (how === null) return { sent: false, why: `Action Gate could not find ${label}’s send control, so nothing was sent. Your text is still in the composer.`, retryable: true };
    const evidence = await this.evidenceOfSend(attempt, composer, requestsBefore);
    if (evidence === null) {
      return { sent: false, why: `${label} did not take the message: it is still in the composer and no request left the page. Nothing was sent.`, retryable: true };
    }
    attempt.released = true;
    return { sent: true, evidence };
  }

  /** The composer as it is now: the held one if still shown, else the one the page re-created. */
  private liveComposer(attempt: Attempt): HTMLElement | null {
    if (isVisible(attempt.composer)) return attempt.composer;
    const live = this.deps.composers.find(this.deps.adapter);
    if (live) attempt.composer = live;
    return live;
  }

  /** Evidence that the page sent: the gated text left the live composer, or the page made a request. */
  private async evidenceOfSend(attempt: Attempt, composer: HTMLElement, requestsBefore: number): Promise<ReleaseEvidence | null> {
    const patience = this.deps.confirmMs ?? CONFIRM_MS;
    for (let waited = 0; ; waited += CONFIRM_POLL_MS) {
      const live = isVisible(composer) ? composer : this.deps.composers.find(this.deps.adapter);
      if (live !== null && sha256Hex(utf8(composerText(live))) !== attempt.textHash) return 'composer-cleared';
      if ((this.deps.pageRequests?.() ?? 0) > requestsBefore) return 'page-request';
      if (waited >= patience) return null;
      await this.deps.sleep(CONFIRM_POLL_MS);
    }
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
