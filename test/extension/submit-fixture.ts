/** A held action as the content script describes it (utils/content/gate-flow.ts does the same). */
import { utf8 } from '../../shared/encoding.ts';
import { sha256Hex } from '../../shared/hash.ts';
import type { GateSubmit } from '../../extension/utils/messages.ts';
import { newClientNonce } from '../../extension/utils/content/ids.ts';
import { redact } from '../../extension/utils/redact.ts';

let n = 0;

export function heldAction(text: string, attemptId = `attempt-${process.pid}-${++n}-${Date.now()}`): GateSubmit {
  const r = redact(text);
  return {
    attempt_id: attemptId,
    client_nonce: newClientNonce(),
    adapter: 'chatgpt',
    conversation: '/c/conversation-1',
    redacted_text: r.text,
    redactions: r.counts as Record<string, number>,
    text_sha256: sha256Hex(utf8(text)),
    chars: [...text].length,
  };
}
