/**
 * Site adapters as data. Real AI web apps change their DOM often (a textarea
 * becomes a ProseMirror div), so each adapter is a handful of selectors and a release strategy,
 * never code; the fixture pages in test/extension/fixtures mirror each site's composer DOM and
 * the end-to-end tests drive these exact definitions.
 */

export const ADAPTER_IDS = ['chatgpt', 'claude', 'gemini', 'copilot', 'generic'] as const;
export type AdapterId = (typeof ADAPTER_IDS)[number];

/**
 * How a held action is let through once the gate allows it. Re-dispatched events are untrusted
 * (isTrusted=false) and ProseMirror-style editors ignore a synthetic Enter, so clicking the
 * site's own send control comes first (shared/notes/extension-testing.md).
 */
export const RELEASE_STRATEGIES = ['click-send', 'request-submit', 'enter-key'] as const;
export type ReleaseStrategy = (typeof RELEASE_STRATEGIES)[number];

export interface SiteAdapter {
  id: AdapterId;
  /** Shown to people: "Paused: your ChatGPT prompt ...". */
  label: string;
  /** The `tool_id` put in the pack context (an id: letters, digits, ._:/@-). */
  toolId: string;
  /** A public AI tool outside the organisation (true for the built-in sites), or an internal one. */
  external: boolean;
  /** Hostnames this adapter serves without any admin mapping. */
  hosts: readonly string[];
  /** CSS selector list of the composer: a textarea or a contenteditable (ProseMirror, Quill). */
  composer: string;
  /** CSS selector list of the send control. */
  send: string;
  /** Whether Enter in the composer sends (chat apps) or inserts a line break (a plain form). */
  enterSends: boolean;
  /** Release strategies in order of preference; the first that applies is used, once. */
  release: readonly ReleaseStrategy[];
  /** Regex source run on location.pathname; group 1 is the conversation id (source_key). */
  conversation: string | null;
}

export const BUILT_IN_ADAPTERS: Readonly<Record<Exclude<AdapterId, 'generic'>, SiteAdapter>> = {
  chatgpt: {
    id: 'chatgpt',
    label: 'ChatGPT',
    toolId: 'chatgpt-web',
    external: true,
    hosts: ['chatgpt.com', 'chat.openai.com'],
    composer: '#prompt-textarea, textarea[name="prompt-textarea"]',
    send: 'button[data-testid="send-button"], #composer-submit-button',
    enterSends: true,
    release: ['click-send', 'request-submit'],
    conversation: '^/(?:g/[^/]+/)?c/([A-Za-z0-9-]+)',
  },
  claude: {
    id: 'claude',
    label: 'Claude',
    toolId: 'claude-web',
    external: true,
    hosts: ['claude.ai'],
    composer: 'div.ProseMirror[contenteditable="true"], [data-testid="chat-input"]',
    send: 'button[aria-label="Send message"], button[aria-label="Send Message"]',
    enterSends: true,
    release: ['click-send'],
    conversation: '^/chat/([A-Za-z0-9-]+)',
  },
  gemini: {
    id: 'gemini',
    label: 'Gemini',
    toolId: 'gemini-web',
    external: true,
    hosts: ['gemini.google.com'],
    composer: 'rich-textarea .ql-editor[contenteditable="true"], rich-textarea [contenteditable="true"]',
    send: 'button.send-button, button[aria-label="Send message"]',
    enterSends: true,
    release: ['click-send'],
    conversation: '^/app/([A-Za-z0-9-]+)',
  },
  copilot: {
    id: 'copilot',
    label: 'Microsoft Copilot',
    toolId: 'copilot-web',
    external: true,
    hosts: ['copilot.microsoft.com'],
    composer: 'textarea#userInput, textarea[data-testid="composer-input"]',
    send: 'button[data-testid="submit-button"], button[aria-label="Submit message"]',
    enterSends: true,
    release: ['click-send', 'enter-key'],
    conversation: '^/chats/([A-Za-z0-9-]+)',
  },
};

/** What an admin configures for an internal tool (options page, "Generic adapter"). */
export interface GenericAdapterConfig {
  label: string;
  composer: string;
  send: string;
  enterSends: boolean;
  release: ReleaseStrategy[];
}

export const DEFAULT_GENERIC_ADAPTER: GenericAdapterConfig = {
  label: 'Internal tool',
  composer: 'textarea, [contenteditable="true"]',
  send: 'button[type="submit"], input[type="submit"]',
  enterSends: false,
  release: ['request-submit', 'click-send'],
};

export function genericAdapter(config: GenericAdapterConfig): SiteAdapter {
  return {
    id: 'generic',
    label: config.label,
    toolId: 'internal-tool',
    external: false,
    hosts: [],
    composer: config.composer,
    send: config.send,
    enterSends: config.enterSends,
    release: config.release,
    conversation: null,
  };
}
