// @vitest-environment happy-dom
/**
 * One held action from hold to outcome in the page, with the background's
 * answers given by the test: release exactly once, retry a dropped message with the same
 * attempt, never release changed text, follow the review, and withdraw.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { BUILT_IN_ADAPTERS } from '../../extension/utils/adapters/definitions.ts';
import type { Dialog } from '../../extension/components/gate-dialog.tsx';
import { ComposerTracker } from '../../extension/utils/content/composers.ts';
import { GateFlow } from '../../extension/utils/content/gate-flow.ts';
import { MessageError } from '../../extension/utils/messages.ts';
import { DEFAULT_SETTINGS } from '../../extension/utils/settings.ts';
import type { GateOutcome, MessageType, RequestOf, ReviewState, Verification } from '../../extension/utils/messages.ts';
import { loadFixtureMarkup } from './fixture-dom.ts';

const VERIFIED: Verification = { verified: true, key_status: 'sandbox', dev_key: true, failed_checks: [], key_alarm: false };
const allow: GateOutcome = { action: 'release', decision: 'allow', action_key: 'law:proposed-action:1', next_step: 'go', reasons: [], verification: VERIFIED };
const WHY = [{ rule: 'law.default.proposed-action', explanation: '“Proposed action” needs review until your organisation allowlists this action type.' }];
const review: GateOutcome = { action: 'review', decision: 'needs_review', action_key: 'law:proposed-action:2', review_route: 'browser:legal-review', next_step: 'Pause here.', reasons: WHY, verification: VERIFIED };
const state = (status: ReviewState['status'], release = false): ReviewState => ({ status, release, reviewer: 'r', verification: VERIFIED, problem: null });

let calls: { type: MessageType; payload: unknown }[];
let reports: RequestOf<'release.report'>[];
let answers: Partial<Record<MessageType, (() => unknown)[]>>;
let dialogs: (Dialog | null)[];
let sent: string[];
let composer: HTMLTextAreaElement;

function flow(): GateFlow {
  return new GateFlow(deps());
}

function deps(): ConstructorParameters<typeof GateFlow>[0] {
  return {
    adapter: BUILT_IN_ADAPTERS.copilot,
    ui: { show: (d) => dialogs.push(d), hide: () => dialogs.push(null) },
    send: (async <K extends MessageType>(type: K, payload: RequestOf<K>) => {
      if (type === 'release.report') return void reports.push(payload as RequestOf<'release.report'>);
      calls.push({ type, payload });
      const next = answers[type]?.shift();
      if (!next) throw new Error(`no answer queued for ${type}`);
      return next();
    }) as never,
    bypass: (dispatch) => dispatch(),
    location: new URL('https://copilot.microsoft.com/chats/abc') as unknown as Location,
    sleep: async () => undefined,
    now: () => 0,
    newId: () => 'attempt-0001',
    composers: new ComposerTracker(),
  };
}

beforeEach(() => {
  calls = [];
  reports = [];
  answers = {};
  dialogs = [];
  sent = [];
  loadFixtureMarkup('copilot');
  composer = document.querySelector('textarea#userInput')!;
  composer.value = 'Hello there, my email is ada@example.com';
  document.querySelector('button[data-testid="submit-button"]')!.addEventListener('click', () => {
    sent.push(composer.value);
    composer.value = '';
  });
});

describe('GateFlow', () => {
  it('allow: releases once, through the site\'s own send control; the text sent to the background is redacted', async () => {
    answers['gate.submit'] = [() => allow];
    await flow().held(composer);
    expect(sent).toEqual(['Hello there, my email is ada@example.com']);
    const submit = calls[0]!.payload as RequestOf<'gate.submit'>;
    expect(submit).toMatchObject({ attempt_id: 'attempt-0001', adapter: 'copilot', conversation: 'abc', redacted_text: 'Hello there, my email is [EMAIL]', redactions: { EMAIL: 1 } });
    expect(JSON.stringify(calls)).not.toContain('ada@example.com');
    expect(dialogs.at(-1)).toBeNull();
  });

  it('a message dropped while the worker restarts is sent again with the same attempt, and released once', async () => {
    answers['gate.submit'] = [
      () => {
        throw new Error('Could not establish connection. Receiving end does not exist.');
      },
      () => allow,
    ];
    await flow().held(composer);
    expect(calls.map((c) => (c.payload as { attempt_id: string }).attempt_id)).toEqual(['attempt-0001', 'attempt-0001']);
    expect(reports).toEqual([{ action_key: allow.action_key, attempt_id: 'attempt-0001', sent: true, evidence: 'composer-cleared' }]);
    expect(sent).toHaveLength(1);
  });

  it('an error answered by the background is not retried: nothing is sent', async () => {
    answers['gate.submit'] = [
      () => {
        throw new MessageError('This page is not a site Action Gate gates.');
      },
    ];
    await flow().held(composer);
    expect(calls).toHaveLength(1);
    expect(sent).toEqual([]);
    expect(dialogs.at(-1)).toMatchObject({ kind: 'failed' });
  });

  it('fail-closed and blocked leave the text in the composer', async () => {
    answers['gate.submit'] = [() => ({ action: 'fail-closed', reason: 'unreachable', message: 'Nothing was sent.' }), () => ({ action: 'block', decision: 'blocked', action_key: 'k', next_step: 'Stop.', reasons: WHY, verification: VERIFIED })];
    const f = flow();
    await f.held(composer);
    f.close();
    await f.held(composer);
    expect(sent).toEqual([]);
    expect(composer.value).toContain('Hello there');
    expect(dialogs.filter((d) => d !== null).map((d) => d!.kind)).toEqual(['checking', 'failed', 'checking', 'blocked']);
  });

  it('every attempt carries its own 128-bit client_nonce; "Try again" and a dropped message resend the same one', async () => {
    answers['gate.submit'] = [
      () => {
        throw new Error('Could not establish connection. Receiving end does not exist.');
      },
      () => ({ action: 'fail-closed', reason: 'unreachable', message: 'Nothing was sent.' }),
      () => allow,
      () => allow,
    ];
    const f = flow();
    await f.held(composer);
    await f.retry();
    expect(sent).toHaveLength(1);
    const nonces = calls.map((c) => (c.payload as RequestOf<'gate.submit'>).client_nonce);
    expect(nonces).toHaveLength(3);
    expect(nonces[0]).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(new Set(nonces).size).toBe(1);
    // The next action is a new attempt with a fresh nonce.
    composer.value = 'A second prompt';
    await f.held(composer);
    const next = (calls.at(-1)!.payload as RequestOf<'gate.submit'>).client_nonce;
    expect(next).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(next).not.toBe(nonces[0]);
  });

  it('text changed while the gate was deciding is not released', async () => {
    answers['gate.submit'] = [
      () => {
        composer.value = 'something else';
        return allow;
      },
    ];
    await flow().held(composer);
    expect(sent).toEqual([]);
    expect(dialogs.at(-1)).toMatchObject({ kind: 'not-sent', message: expect.stringContaining('not the text that was checked'), retry: false });
  });

  it('a release the page does not take is reported as not sent, and may be retried once with the same attempt', async () => {
    const button = document.querySelector<HTMLButtonElement>('button[data-testid="submit-button"]')!;
    const inert = button.cloneNode(true) as HTMLButtonElement; // a re-rendered button whose handler is not wired yet
    button.replaceWith(inert);
    answers['gate.submit'] = [() => allow];
    const f = flow();
    await f.held(composer);
    expect(sent).toEqual([]);
    expect(dialogs.at(-1)).toMatchObject({ kind: 'not-sent', message: expect.stringContaining('did not take the message'), retry: true });
    expect(reports).toEqual([{ action_key: allow.action_key, attempt_id: 'attempt-0001', sent: false, evidence: null }]);

    // The retry uses the same authorisation: no second gate call.
    inert.addEventListener('click', () => (sent.push(composer.value), (composer.value = '')));
    await f.retry();
    expect(sent).toEqual(['Hello there, my email is ada@example.com']);
    expect(calls.filter((c) => c.type === 'gate.submit')).toHaveLength(1);
    expect(reports.at(-1)).toEqual({ action_key: allow.action_key, attempt_id: 'attempt-0001', sent: true, evidence: 'composer-cleared' });
    await f.retry();
    expect(sent).toHaveLength(1);
  });

  it('gives up after one retry: the second unconfirmed release offers no more', async () => {
    const button = document.querySelector<HTMLButtonElement>('button[data-testid="submit-button"]')!;
    button.replaceWith(button.cloneNode(true));
    answers['gate.submit'] = [() => allow];
    const f = flow();
    await f.held(composer);
    await f.retry();
    expect(dialogs.at(-1)).toMatchObject({ kind: 'not-sent', retry: false });
    expect(reports.map((r) => r.sent)).toEqual([false, false]);
  });

  it('releases through the composer the page re-created while the action waited, not the detached one', async () => {
    answers['gate.submit'] = [() => review];
    answers['review.status'] = [
      () => {
        // React re-renders the composer: same text, new elements, new handler.
        const form = composer.closest('form') ?? composer.parentElement!;
        const fresh = form.cloneNode(true) as HTMLElement;
        form.replaceWith(fresh);
        const live = fresh.querySelector<HTMLTextAreaElement>('textarea#userInput')!;
        live.value = composer.value;
        fresh.querySelector('button[data-testid="submit-button"]')!.addEventListener('click', () => (sent.push(`live:${live.value}`), (live.value = '')));
        return state('approved', true);
      },
    ];
    await flow().held(composer);
    expect(sent).toEqual(['live:Hello there, my email is ada@example.com']);
    expect(dialogs.at(-1)).toMatchObject({ kind: 'approved', evidence: 'composer-cleared' });
  });

  it('needs_review: stays paused while pending or escalated, releases once on a releasable approval', async () => {
    answers['gate.submit'] = [() => review];
    answers['review.status'] = [() => state('pending'), () => state('escalated'), () => state('approved', true)];
    await flow().held(composer);
    expect(sent).toHaveLength(1);
    expect(dialogs.filter((d) => d?.kind === 'review').map((d) => (d as { status: string }).status)).toEqual(['pending', 'pending', 'escalated']);
    expect(dialogs.find((d) => d?.kind === 'review')).toMatchObject({ reasons: WHY });
    expect(dialogs.at(-1)).toMatchObject({ kind: 'approved', verification: VERIFIED });
    expect(calls.filter((c) => c.type === 'review.status').every((c) => (c.payload as { attempt_id: string }).attempt_id === 'attempt-0001')).toBe(true);
  });

  it('an approval the background does not release (receipt unverified, or already used) is not sent', async () => {
    answers['gate.submit'] = [() => review];
    answers['review.status'] = [() => ({ ...state('approved', false), problem: 'The approval’s review receipt did not verify, so nothing was sent.' })];
    await flow().held(composer);
    expect(sent).toEqual([]);
    expect(dialogs.at(-1)).toMatchObject({ kind: 'rejected', problem: expect.stringContaining('did not verify') });
  });

  it('rejected is never sent', async () => {
    answers['gate.submit'] = [() => review];
    answers['review.status'] = [() => state('rejected')];
    await flow().held(composer);
    expect(sent).toEqual([]);
    expect(dialogs.at(-1)).toMatchObject({ kind: 'rejected', status: 'rejected' });
  });

  it('withdraw stops the wait and tells the background; nothing is sent', async () => {
    const f = flow();
    answers['gate.submit'] = [() => review];
    answers['review.withdraw'] = [() => ({ withdrawn: true })];
    answers['review.status'] = [
      () => {
        void f.withdraw();
        return state('approved', true);
      },
    ];
    await f.held(composer);
    expect(sent).toEqual([]);
    expect(calls.map((c) => c.type)).toEqual(['gate.submit', 'review.status', 'review.withdraw']);
  });

  it('a paste with flagged text is held and shown in place; the admin rule decides what may be pasted', () => {
    const rules = { ...DEFAULT_SETTINGS.pasteRules, EMAIL: 'warn', PRIVATE_KEY: 'block' } as const;
    const f = new GateFlow({ ...deps(), pasteRules: rules });
    composer.value = '';
    expect(f.pasted(composer, 'Nothing sensitive here.')).toBe(false);

    expect(f.pasted(composer, 'Write to ada@example.com please')).toBe(true);
    expect(dialogs.at(-1)).toMatchObject({ kind: 'paste', mode: 'warn', reasons: ['an email address'] });
    expect((dialogs.at(-1) as { segments: { text: string; kind: string | null }[] }).segments).toEqual([
      { text: 'Write to ', kind: null, reason: null },
      { text: 'ada@example.com', kind: 'EMAIL', reason: 'an email address' },
      { text: ' please', kind: null, reason: null },
    ]);
    f.completePaste(true);
    expect(composer.value).toBe('Write to [EMAIL] please');

    composer.value = '';
    expect(f.pasted(composer, 'key: -----BEGIN PRIVATE KEY-----\nMC4\n-----END PRIVATE KEY----- and ada@example.com')).toBe(true);
    expect(dialogs.at(-1)).toMatchObject({ kind: 'paste', mode: 'block' });
    f.completePaste(true);
    f.completePaste(false);
    expect(composer.value).toBe('');
  });

  it('holds one action at a time', async () => {
    const f = flow();
    answers['gate.submit'] = [
      () => {
        void f.held(composer);
        return allow;
      },
    ];
    await f.held(composer);
    expect(calls).toHaveLength(1);
    expect(sent).toHaveLength(1);
  });
});
