/**
 * The background's message table implementation: one handler per entry of MessageTable,
 * checked with `satisfies HandlerTable` so a missing or mistyped handler fails to compile
 * (STYLE.md, "Extensions"). Handlers are thin: they resolve settings and the sender's site,
 * then call the gate, review and log modules.
 */
import { adapterForUrl } from '../adapters/match.ts';
import { isSha256Hex } from '../../../shared/encoding.ts';
import type { ExtensionDatabase } from '../db.ts';
import { EXTENSION_PAGE_ONLY } from '../messages.ts';
import type { Envelope, GateSubmit, MessageType, RequestOf, ResponseOf } from '../messages.ts';
import { isConfigured } from '../settings.ts';
import type { Settings } from '../settings.ts';
import { isRecord } from '../../../shared/attestation.ts';
import { CompanionError } from './companion-api.ts';
import type { CompanionApi } from './companion-api.ts';
import { fetchUsage, listPacks, testConnection } from './connection.ts';
import type { DecisionLog } from './decision-log.ts';
import { CLIENT_NONCE, submitGate } from './gate-client.ts';
import { KeyPins, JWKS_PATH } from './key-pins.ts';
import { INDEPENDENT_MAX_KEYS, independentEvidenceFor, publishedVerifiers } from './evidence.ts';
import type { IndependentEvidence } from '../../../shared/independent-evidence.ts';
import { gradingMirror, pendingReviews, postReview, reviewReasons, reviewStatus } from './review-client.ts';
import { withdrawReviewContext } from './review-context.ts';
import { fetchReviewContext, listReviewKeys, registerReviewKey, reviewRecord } from './review-record.ts';

export interface BackgroundServices {
  db: ExtensionDatabase;
  log: DecisionLog;
  pins: KeyPins;
  loadSettings: () => Promise<Settings>;
  api: (s: Pick<Settings, 'companionUrl' | 'apiKey'>) => CompanionApi;
  now: () => Date;
  newId: () => string;
  /** The extension's own origin, e.g. chrome-extension://<id>/ */
  extensionBaseUrl: string;
  extensionId: string;
  /** Shows how many reviews wait on the toolbar icon (the reviewer's badge). */
  showPendingCount: (count: number) => Promise<void>;
}

/** The parts of runtime.MessageSender the handlers look at. */
export interface SenderInfo {
  id?: string;
  url?: string;
  tab?: unknown;
}

type Handler<K extends MessageType> = (payload: RequestOf<K>, sender: SenderInfo) => Promise<ResponseOf<K>>;
export type HandlerTable = { [K in MessageType]: Handler<K> };

export function createHandlers(svc: BackgroundServices) {
  return {
    'site.config': async (_payload, sender) => {
      const settings = await svc.loadSettings();
      const adapter = sender.url ? adapterForUrl(sender.url, settings) : null;
      return adapter ? { adapter, pasteRules: settings.pasteRules } : null;
    },

    'gate.submit': async (payload, sender) => {
      const settings = await svc.loadSettings();
      const adapter = sender.url ? adapterForUrl(sender.url, settings) : null;
      if (adapter === null || adapter.id !== payload.adapter) throw new Error('This page is not a site Action Gate gates.');
      assertGateSubmit(payload);
      const deps = { api: svc.api(settings), pins: svc.pins, log: svc.log, settings, now: svc.now };
      return submitGate(deps, payload, adapter, new URL(sender.url!).host);
    },

    'review.status': async ({ action_key, attempt_id }) => {
      const settings = await svc.loadSettings();
      return reviewStatus({ api: svc.api(settings), pins: svc.pins, log: svc.log, now: svc.now }, action_key, attempt_id);
    },

    'release.report': async ({ action_key, attempt_id, sent, evidence }) => {
      if (typeof action_key !== 'string' || typeof attempt_id !== 'string' || typeof sent !== 'boolean') throw new Error('release.report: malformed request');
      const ev = evidence === 'composer-cleared' || evidence === 'page-request' || evidence === 'handed-to-page' ? evidence : null;
      return { recorded: await svc.log.recordRelease(action_key, attempt_id, { sent, evidence: sent ? ev : null, time: svc.now().toISOString() }) };
    },

    'review.withdraw': async ({ action_key }) => {
      const entry = await svc.log.get(action_key);
      if (entry && entry.released_attempt === null) {
        await svc.log.recordReview(action_key, { status: 'withdrawn', reviewer: null, receiptKey: null, verified: null, time: svc.now().toISOString() });
        // Best effort: a companion that has none, or is unreachable, erases it when the review ends.
        await withdrawReviewContext(svc.api(await svc.loadSettings()), action_key).catch(() => undefined);
      }
      return { withdrawn: true as const };
    },

    'popup.state': async () => {
      const settings = await svc.loadSettings();
      let connection = { ok: false, detail: 'Not set up: enter the companion URL and API key in the options.' };
      let usage = null;
      if (isConfigured(settings)) {
        try {
          usage = await fetchUsage(svc.api(settings));
          connection = { ok: true, detail: `Connected to ${settings.companionUrl}` };
        } catch (e) {
          if (!(e instanceof CompanionError)) throw e;
          connection = { ok: false, detail: e.message };
        }
      }
      return {
        configured: isConfigured(settings),
        role: settings.role,
        companionUrl: settings.companionUrl,
        connection,
        usage,
        recent: await svc.log.recent(20),
        reviews: settings.role === 'reviewer' ? await svc.log.recentReviews(10) : [],
        incidents: await svc.log.recentIncidents(5),
        alarms: await svc.db.keyAlarms.orderBy('time').reverse().toArray(),
      };
    },

    'connection.test': async ({ companionUrl, apiKey }) => {
      const saved = await svc.loadSettings();
      const api = svc.api({ companionUrl: companionUrl ?? saved.companionUrl, apiKey: apiKey ?? saved.apiKey });
      const pins = new KeyPins({ db: svc.db, fetchJwks: () => api.getPublic(JWKS_PATH), now: svc.now });
      return testConnection(api, pins, svc.db);
    },

    'packs.list': async () => listPacks(svc.api(await svc.loadSettings())),

    'reviews.pending': async () => {
      const settings = await requireReviewer(svc);
      const pending = await pendingReviews(svc.api(settings));
      await svc.showPendingCount(pending.length);
      return pending;
    },

    'reviews.reasons': async ({ action_key }) => {
      const settings = await requireReviewer(svc);
      return reviewReasons({ api: svc.api(settings), pins: svc.pins }, String(action_key));
    },

    'reviews.mirror': async () => gradingMirror(svc.api(await requireReviewer(svc))),

    'reviews.decide': async (payload) => {
      const settings = await requireReviewer(svc);
      const api = svc.api(settings);
      const mirror = payload.mirror_grades && payload.pack === 'law' ? await gradingMirror(api) : null;
      const deps = { api, pins: svc.pins, log: svc.log, now: svc.now };
      return postReview(deps, payload, settings.reviewerId, mirror, `agr-${svc.newId()}`);
    },

    'reviews.record': async ({ action_key }) => reviewRecord({ api: svc.api(await requireReviewer(svc)), pins: svc.pins }, String(action_key)),

    'reviews.keys': async () => listReviewKeys(svc.api(await requireReviewer(svc))),

    'reviews.registerKey': async ({ public_key, label }) => registerReviewKey(svc.api(await requireReviewer(svc)), public_key, label),

    // The ciphertext passes through to the popup, which opens it; nothing of it is stored here.
    'reviews.context': async ({ action_key, key_id }) => fetchReviewContext(svc.api(await requireReviewer(svc)), action_key, key_id),

    'decisions.independent': async ({ action_keys }) => {
      if (!Array.isArray(action_keys) || action_keys.length > INDEPENDENT_MAX_KEYS || !action_keys.every((k) => typeof k === 'string' && k.length <= 200)) {
        throw new Error(`decisions.independent: expected up to ${INDEPENDENT_MAX_KEYS} action keys`);
      }
      const api = svc.api(await svc.loadSettings());
      const deps = { api, pins: svc.pins, verifiers: publishedVerifiers(api) };
      const found: Record<string, IndependentEvidence | null> = {};
      for (const k of action_keys) found[k] = await independentEvidenceFor(deps, k);
      return found;
    },

    'log.export': async () => svc.log.export(svc.now()),
  } satisfies HandlerTable;
}

/** The reviewer's badge: the tenant's pending count; cleared for the employee role. */
export async function refreshPendingBadge(svc: BackgroundServices): Promise<void> {
  const settings = await svc.loadSettings();
  if (settings.role !== 'reviewer' || !isConfigured(settings)) return svc.showPendingCount(0);
  await svc.showPendingCount((await pendingReviews(svc.api(settings))).length);
}

async function requireReviewer(svc: BackgroundServices): Promise<Settings> {
  const settings = await svc.loadSettings();
  if (settings.role !== 'reviewer') throw new Error('Reviewer mode is off: choose the reviewer role in the options.');
  return settings;
}

/** A file name longer than this is no file name a page could hold (NAME_MAX is 255 bytes on common file systems). */
const FILE_NAME_MAX_CHARS = 1024;

function assertGateSubmit(p: GateSubmit): void {
  const ok =
    typeof p.attempt_id === 'string' &&
    /^[A-Za-z0-9-]{8,100}$/.test(p.attempt_id) &&
    typeof p.client_nonce === 'string' &&
    CLIENT_NONCE.test(p.client_nonce) &&
    typeof p.conversation === 'string' &&
    typeof p.redacted_text === 'string' &&
    isSha256Hex(p.text_sha256) &&
    Number.isInteger(p.chars) &&
    isRecord(p.redactions) &&
    (p.files === undefined ||
      (Array.isArray(p.files) &&
        p.files.length > 0 &&
        p.files.length <= 20 &&
        p.files.every((f) => isRecord(f) && isSha256Hex(f.sha256) && isSha256Hex(f.name_sha256) && Number.isInteger(f.size) && f.size >= 0 && typeof f.media_type === 'string' && /^[\w.+-]*\/?[\w.+-]*$/.test(f.media_type) && f.media_type.length <= 100))) &&
    (p.file_names === undefined ||
      (Array.isArray(p.files) && Array.isArray(p.file_names) && p.file_names.length === p.files.length && p.file_names.every((n) => typeof n === 'string' && n.length <= FILE_NAME_MAX_CHARS)));
  if (!ok) throw new Error('gate.submit: malformed request');
}

/**
 * The runtime.onMessage listener: answers only messages shaped like ours, from this extension,
 * and keeps the reviewer, options and log messages to the extension's own pages.
 */
export function createMessageListener(handlers: HandlerTable, svc: Pick<BackgroundServices, 'extensionBaseUrl' | 'extensionId'>) {
  return (message: unknown, sender: SenderInfo): Promise<Envelope<unknown>> | undefined => {
    if (!isRecord(message) || typeof message.type !== 'string' || !(message.type in handlers)) return undefined;
    const type = message.type as MessageType;
    return (async (): Promise<Envelope<unknown>> => {
      if (sender.id !== svc.extensionId) return { ok: false, error: 'not from this extension' };
      const fromExtensionPage = sender.url?.startsWith(svc.extensionBaseUrl) === true;
      if (EXTENSION_PAGE_ONLY.has(type) && !fromExtensionPage) return { ok: false, error: `${type} is only for the extension's own pages` };
      try {
        const handler = handlers[type] as Handler<MessageType>;
        return { ok: true, value: await handler((message.payload ?? {}) as never, sender) };
      } catch (e) {
        return { ok: false, error: e instanceof Error ? e.message : String(e) };
      }
    })();
  };
}
