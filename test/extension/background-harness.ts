/**
 * The extension's background services for unit tests: the real handlers, Dexie log (on
 * fake-indexeddb), settings (in WXT's fake browser storage) and key pins, talking to a real
 * companion in process (test/companion/helpers.ts: real SQLite, real signer) through its
 * app.request, so no port is opened. `intercept` lets a test stand between the two, like a
 * network that drops or alters answers.
 */
import 'fake-indexeddb/auto';
import { createTestContext } from '../companion/helpers.ts';
import type { TestContext } from '../companion/helpers.ts';
import { companionApi } from '../../extension/utils/background/companion-api.ts';
import { DecisionLog } from '../../extension/utils/background/decision-log.ts';
import { createHandlers, createMessageListener } from '../../extension/utils/background/handlers.ts';
import type { BackgroundServices, SenderInfo } from '../../extension/utils/background/handlers.ts';
import { JWKS_PATH, KeyPins } from '../../extension/utils/background/key-pins.ts';
import { openExtensionDatabase } from '../../extension/utils/db.ts';
import type { Envelope, MessageType, RequestOf, ResponseOf } from '../../extension/utils/messages.ts';
import { DEFAULT_SETTINGS, loadSettings, saveSettings } from '../../extension/utils/settings.ts';
import type { Settings } from '../../extension/utils/settings.ts';

export const COMPANION_URL = 'http://companion.test';
export const EXTENSION_ID = 'test-extension-id';
export const EXTENSION_BASE = `chrome-extension://${EXTENSION_ID}/`;
export const FIXTURE_URL = 'http://127.0.0.1:41234/chatgpt.html';

export const POPUP: SenderInfo = { id: EXTENSION_ID, url: `${EXTENSION_BASE}popup.html` };
export const CONTENT: SenderInfo = { id: EXTENSION_ID, url: FIXTURE_URL, tab: { id: 1 } };

export type Intercept = (request: Request, forward: (r: Request) => Promise<Response>) => Promise<Response>;

export interface Background {
  ctx: TestContext;
  apiKey: string;
  svc: BackgroundServices;
  handlers: ReturnType<typeof createHandlers>;
  listener: ReturnType<typeof createMessageListener>;
  /** Sends a message as `sender` through the real listener and unwraps the envelope. */
  send<K extends MessageType>(type: K, payload: RequestOf<K>, sender?: SenderInfo): Promise<ResponseOf<K>>;
  raw(message: unknown, sender: SenderInfo): Promise<Envelope<unknown>> | undefined;
  intercept: Intercept | null;
  /** Every wait the companion client asked for (a 503's Retry-After); waits end at once here. */
  sleeps: number[];
  /** Every pending count the background showed on the toolbar badge. */
  badges: number[];
  configure(s: Partial<Settings>): Promise<void>;
  close(): Promise<void>;
}

let dbCounter = 0;

export async function startBackground(): Promise<Background> {
  const ctx = await createTestContext();
  const { apiKey } = await ctx.signup();
  const db = openExtensionDatabase(`action-gate-test-${process.pid}-${++dbCounter}`);
  const forward = async (r: Request): Promise<Response> => ctx.app.request(r);
  const bg = { intercept: null, badges: [] as number[], sleeps: [] as number[] } as unknown as Background;
  const fetchImpl: typeof fetch = (input, init) => {
    const request = new Request(input, init);
    return bg.intercept ? bg.intercept(request, forward) : forward(request);
  };
  const sleep = async (ms: number) => void bg.sleeps.push(ms);
  const api = (s: Pick<Settings, 'companionUrl' | 'apiKey'>) => companionApi({ baseUrl: s.companionUrl, apiKey: s.apiKey, fetch: fetchImpl, sleep });
  const now = () => new Date();
  const svc: BackgroundServices = {
    db,
    log: new DecisionLog(db),
    pins: new KeyPins({ db, now, fetchJwks: async () => api(await loadSettings()).getPublic(JWKS_PATH) }),
    loadSettings,
    api,
    now,
    newId: () => crypto.randomUUID(),
    extensionBaseUrl: EXTENSION_BASE,
    extensionId: EXTENSION_ID,
    showPendingCount: async (count) => void bg.badges.push(count),
  };
  const handlers = createHandlers(svc);
  const listener = createMessageListener(handlers, svc);
  await saveSettings({
    ...DEFAULT_SETTINGS,
    companionUrl: COMPANION_URL,
    apiKey,
    siteMappings: [{ pattern: 'http://127.0.0.1:*/chatgpt.html*', adapter: 'chatgpt' }],
  });
  return Object.assign(bg, {
    ctx,
    apiKey,
    svc,
    handlers,
    listener,
    raw: (message: unknown, sender: SenderInfo) => listener(message, sender),
    async send<K extends MessageType>(type: K, payload: RequestOf<K>, sender: SenderInfo = CONTENT): Promise<ResponseOf<K>> {
      const reply = await listener({ type, payload }, sender);
      if (!reply) throw new Error(`no answer to ${type}`);
      if (!reply.ok) throw new Error(reply.error);
      return reply.value as ResponseOf<K>;
    },
    async configure(s: Partial<Settings>) {
      await saveSettings({ ...(await loadSettings()), ...s });
    },
    async close() {
      db.close();
      await ctx.close();
    },
  });
}

/** PUT /tenant/policy on the in-process companion. */
export async function putPolicy(bg: Background, pack: string, policy: Record<string, unknown>): Promise<void> {
  const res = await bg.ctx.request(`/tenant/policy?policy_pack=${pack}`, { method: 'PUT', key: bg.apiKey, json: { policy_pack: pack, ...policy } });
  if (res.status !== 201 && res.status !== 200) throw new Error(`policy: ${res.status} ${res.text}`);
}
