/**
 * A new API key's secret, shown this once: the service stores only its hash and cannot show it
 * again. It lives only in this component's state (never in storage or the URL); Copy puts it on
 * the clipboard, and where the clipboard is refused the text is selected for a manual copy.
 */
import { useRef, useState } from 'preact/hooks';
import { Notice } from './notice.tsx';

export function SecretOnce({ title, secret, onDone }: { title: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'select'>('no');
  const text = useRef<HTMLElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      const range = document.createRange();
      if (text.current) {
        range.selectNodeContents(text.current);
        const sel = getSelection();
        sel?.removeAllRanges();
        sel?.addRange(range);
      }
      setCopied('select');
    }
  };
  return (
    <Notice tone="success">
      <p>{title}</p>
      <p>
        <code class="secret" ref={text} data-secret="">
          {secret}
        </code>
      </p>
      <p>Copy it now: it is shown only this once, and only its hash is kept.</p>
      <div class="actions">
        <button type="button" onClick={copy}>
          Copy the key
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          I have stored it, hide it
        </button>
        <span aria-live="polite" class="muted">
          {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'select' ? 'The clipboard was refused: the key is selected, copy it with your keyboard.' : ''}
        </span>
      </div>
    </Notice>
  );
}
