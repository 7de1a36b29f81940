/**
 * Capabilities as a person chooses them: every capability the service knows, each with what it
 * allows, as checkboxes in a fieldset; and a compact list for tables. The list below must name
 * every capability of companion/core/auth.ts: the type check at its end fails the build when
 * the service adds one the console does not offer.
 */
import type { Capability } from '../session.ts';

export const CAPABILITY_INFO: readonly { name: Capability; what: string }[] = [
  { name: 'people:manage', what: 'add people, service accounts and keys; change or stop them' },
  { name: 'reviews:decide', what: 'approve, reject or escalate paused actions' },
  { name: 'reviews:delegate', what: 'record a decision in another reviewer’s name' },
  { name: 'policy:manage', what: 'change the tenant policy' },
  { name: 'integrations:manage', what: 'set up routes and webhooks' },
  { name: 'exports:read', what: 'read records exports and documents' },
  { name: 'billing:manage', what: 'upgrade and manage billing' },
  { name: 'account:rename', what: 'rename the tenant' },
  { name: 'account:retention', what: 'set metadata retention' },
  { name: 'gate:submit', what: 'submit actions to the gate' },
  { name: 'records:write', what: 'record actions' },
  { name: 'records:read', what: 'read the tenant’s records and the review board' },
];

type Offered = (typeof CAPABILITY_INFO)[number]['name'];
// Compile-time: true only when every Capability is offered above.
export const EVERY_CAPABILITY_OFFERED: [Exclude<Capability, Offered>] extends [never] ? true : never = true;

/** Held by every new person and service account (companion/core/auth.ts DEFAULT_CAPABILITIES). */
export const DEFAULT_CAPABILITIES: readonly Capability[] = ['gate:submit', 'records:write', 'records:read'];

/** Checkboxes for a set of capabilities; `disabled` ones are shown but cannot be changed. */
export function CapabilityPicker({
  legend,
  value,
  onChange,
  disabled = [],
  hint,
}: {
  legend: string;
  value: readonly string[];
  onChange: (next: Capability[]) => void;
  disabled?: readonly string[];
  hint?: string;
}) {
  const toggle = (c: Capability, on: boolean) => {
    const set = new Set(value);
    if (on) set.add(c);
    else set.delete(c);
    onChange(CAPABILITY_INFO.map((i) => i.name).filter((n) => set.has(n)));
  };
  return (
    <fieldset class="capabilities">
      <legend>{legend}</legend>
      {hint ? <p class="hint">{hint}</p> : null}
      <ul>
        {CAPABILITY_INFO.map((i) => (
          <li key={i.name}>
            <label class="checkbox">
              <input
                type="checkbox"
                checked={value.includes(i.name)}
                disabled={disabled.includes(i.name)}
                onChange={(e) => toggle(i.name, e.currentTarget.checked)}
              />
              <code>{i.name}</code>
              <span class="muted"> {i.what}</span>
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}

/** A capability list in a table cell: each one as code, the defaults left out when asked. */
export function CapabilityList({ list, withoutDefaults = false }: { list: readonly string[]; withoutDefaults?: boolean }) {
  const shown = withoutDefaults ? list.filter((c) => !DEFAULT_CAPABILITIES.includes(c as Capability)) : list;
  if (shown.length === 0) return <span class="muted">{withoutDefaults ? 'defaults only' : 'none'}</span>;
  return (
    <ul class="caps">
      {shown.map((c) => (
        <li key={c}>
          <code>{c}</code>
        </li>
      ))}
    </ul>
  );
}
