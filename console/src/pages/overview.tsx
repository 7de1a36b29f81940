/**
 * Overview: the usage ledger as a gauge, gate decisions over time by outcome, review insights,
 * and the readiness of the service's workers and the tenant's routes.
 */
import { api } from '../api.ts';
import { count, duration, percent } from '../format.ts';
import type { Usage } from '../session.ts';
import { Badge, ReadinessBadge } from '../ui/badge.tsx';
import { StackedBars } from '../ui/chart.tsx';
import { useLoad } from '../ui/load.ts';
import { Loaded } from '../ui/loaded.tsx';
import { NeedsCapability } from '../ui/notice.tsx';
import type { PageProps } from './types.ts';

interface Timeline {
  bucket: 'hour' | 'day';
  decisions: string[];
  buckets: { start: string; counts: Record<string, number> }[];
}

interface Insights {
  pending: number;
  approved: number;
  rejected: number;
  expired: number;
  escalated: number;
  approval_rate: number | null;
  median_seconds_to_decide: number | null;
  oldest_pending_age_seconds: number | null;
}

/** GET /readyz: 200 when ready, else a 503 problem that still names every check. */
interface Readiness {
  checks: Record<string, { ok: boolean; detail?: string }>;
}

interface IntegrationReadiness {
  integrations: { channel: string; target: string; readiness: { state: string; detail: string } }[];
}

export default function Overview({ me }: PageProps) {
  const usage = useLoad(() => api<Usage>('/tenant/usage'));
  const insights = useLoad(() => api<Insights>('/reviews/insights'));
  const canExports = me.capabilities.includes('exports:read');
  return (
    <div class="grid">
      <section aria-labelledby="usage-h" class="card">
        <h2 id="usage-h">Usage</h2>
        <Loaded state={usage}>{(u) => <UsageGauge usage={u} />}</Loaded>
      </section>
      <section aria-labelledby="reviews-h" class="card">
        <h2 id="reviews-h">Reviews</h2>
        <Loaded state={insights}>{(i) => <ReviewStats insights={i} />}</Loaded>
      </section>
      <section aria-labelledby="decisions-h" class="card wide">
        <h2 id="decisions-h">Decisions, last 14 days</h2>
        {canExports ? (
          <DecisionsChart />
        ) : (
          <NeedsCapability capability="exports:read" what="see decisions over time" />
        )}
      </section>
      <section aria-labelledby="ready-h" class="card wide">
        <h2 id="ready-h">Readiness</h2>
        <ReadinessPanel />
      </section>
    </div>
  );
}

function DecisionsChart() {
  const timeline = useLoad(() => api<Timeline>('/tenant/exports/records/timeline?bucket=day'));
  return (
    <Loaded state={timeline}>
      {(t) => <StackedBars title="Gate decisions per day" keys={t.decisions} series={t.buckets.map((b) => ({ label: b.start.slice(0, 10), counts: b.counts }))} />}
    </Loaded>
  );
}

function UsageGauge({ usage }: { usage: Usage }) {
  if (usage.tenant_kind === 'sandbox' && usage.cap !== null) {
    const used = Math.min(usage.actions_used, usage.cap);
    return (
      <div class="gauge">
        <label for="usage-meter">Sandbox allowance</label>
        <meter id="usage-meter" min={0} max={usage.cap} low={usage.cap * 0.7} high={usage.cap * 0.9} optimum={0} value={used} />
        <p class="big">
          {count(usage.actions_used)} <span class="of">of {count(usage.cap)} actions</span>
        </p>
        <p>{usage.remaining === null ? '' : `${count(usage.remaining)} left. `}Upgrade to production for metered credits.</p>
        {usage.warning ? <p class="warning-text">{usage.warning}</p> : null}
      </div>
    );
  }
  return (
    <div class="gauge">
      <p class="big">
        {count(usage.credits_used)} <span class="of">credits used</span>
      </p>
      <p>
        {count(usage.actions_used)} actions · {(usage.cost_cents / 100).toLocaleString(undefined, { style: 'currency', currency: 'USD' })} this period
      </p>
      {usage.warning ? <p class="warning-text">{usage.warning}</p> : null}
    </div>
  );
}

function ReviewStats({ insights }: { insights: Insights }) {
  const stats: [string, string][] = [
    ['Pending', count(insights.pending)],
    ['Median time to decide', duration(insights.median_seconds_to_decide)],
    ['Approval rate', percent(insights.approval_rate)],
    ['Expired', count(insights.expired)],
    ['Oldest pending', duration(insights.oldest_pending_age_seconds)],
  ];
  return (
    <dl class="stats">
      {stats.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

function ReadinessPanel() {
  const service = useLoad(() => fetch('/readyz', { headers: { accept: 'application/json' } }).then((r) => r.json() as Promise<Readiness>));
  const routes = useLoad(() => api<IntegrationReadiness>('/tenant/integrations/readiness'));
  return (
    <div class="two">
      <div>
        <h3>Service and workers</h3>
        <Loaded state={service}>
          {(s) => (
            <ul class="checks">
              {Object.entries(s.checks ?? {}).map(([name, check]) => (
                <li key={name}>
                  <Badge tone={check.ok ? 'ok' : 'bad'}>{check.ok ? 'ready' : 'failing'}</Badge> {name.replaceAll('_', ' ')}
                  {check.detail ? <span class="muted"> — {check.detail}</span> : null}
                </li>
              ))}
            </ul>
          )}
        </Loaded>
      </div>
      <div>
        <h3>Routes and webhooks</h3>
        <Loaded state={routes}>
          {(r) =>
            r.integrations.length === 0 ? (
              <p>No routes or webhooks yet. Add one under Integrations.</p>
            ) : (
              <ul class="checks">
                {r.integrations.map((i) => (
                  <li key={`${i.channel}/${i.target}`}>
                    <ReadinessBadge state={i.readiness.state} /> {i.channel} <code>{i.target}</code>
                  </li>
                ))}
              </ul>
            )
          }
        </Loaded>
      </div>
    </div>
  );
}
