/**
 * Stacked bars of counts per bucket (the decisions chart). The SVG is one image with a text
 * summary for screen readers; the same numbers are in a table under "Show the numbers".
 */
const COLOURS: Record<string, string> = { allow: '#1b7f3b', needs_review: '#a35f00', blocked: '#b3261e' };
const FALLBACK = ['#3559b7', '#6b4fa3', '#2f6f7e', '#7a5c2e'];

export interface Series {
  label: string;
  counts: Record<string, number>;
}

export function colourOf(key: string, keys: string[]): string {
  return COLOURS[key] ?? FALLBACK[keys.indexOf(key) % FALLBACK.length]!;
}

export function StackedBars({ title, series, keys }: { title: string; series: Series[]; keys: string[] }) {
  const width = 640;
  const height = 180;
  const pad = 24;
  const totals = series.map((s) => keys.reduce((n, k) => n + (s.counts[k] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const slot = (width - pad) / Math.max(1, series.length);
  const bar = Math.max(2, slot * 0.7);
  const all = totals.reduce((a, b) => a + b, 0);
  const summary = `${title}: ${all} decisions in ${series.length} periods; ${keys.map((k) => `${k} ${series.reduce((n, s) => n + (s.counts[k] ?? 0), 0)}`).join(', ') || 'none'}.`;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-label={summary}>
        <line x1={pad} y1={height} x2={width} y2={height} class="axis" />
        <text x={0} y={12} class="tick">
          {max}
        </text>
        <text x={0} y={height} class="tick">
          0
        </text>
        {series.map((s, i) => {
          let y = height;
          return (
            <g key={s.label}>
              {keys.map((k) => {
                const h = ((s.counts[k] ?? 0) / max) * (height - 8);
                y -= h;
                return h > 0 ? <rect key={k} x={pad + i * slot + (slot - bar) / 2} y={y} width={bar} height={h} fill={colourOf(k, keys)} /> : null;
              })}
            </g>
          );
        })}
        {series.length > 0 ? (
          <>
            <text x={pad} y={height + 16} class="tick">
              {series[0]!.label}
            </text>
            <text x={width} y={height + 16} class="tick" text-anchor="end">
              {series.at(-1)!.label}
            </text>
          </>
        ) : null}
      </svg>
      <figcaption>
        <ul class="legend">
          {keys.map((k) => (
            <li key={k}>
              <span class="swatch" data-colour={colourOf(k, keys)} aria-hidden="true">
                <svg width="12" height="12">
                  <rect width="12" height="12" fill={colourOf(k, keys)} />
                </svg>
              </span>
              {k}
            </li>
          ))}
        </ul>
        <details>
          <summary>Show the numbers</summary>
          <table>
            <thead>
              <tr>
                <th scope="col">Period</th>
                {keys.map((k) => (
                  <th scope="col" key={k}>
                    {k}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {series.map((s) => (
                <tr key={s.label}>
                  <th scope="row">{s.label}</th>
                  {keys.map((k) => (
                    <td key={k}>{s.counts[k] ?? 0}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      </figcaption>
    </figure>
  );
}
