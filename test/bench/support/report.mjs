// Markdown rendering of the store benchmark: environment header, results table, goals.

const perSecond = (n) => Math.round(n).toLocaleString('en-US');
const ms = (n) => (Number.isFinite(n) ? n.toFixed(3) : '-');
const ratio = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');
const percent = (n) => (Number.isFinite(n) ? `${(n * 100).toFixed(1)}%` : '-');

/** A markdown table with padded columns, so it reads as well in a terminal as rendered. */
export function markdownTable(headers, rows, alignRight = []) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const cell = (text, i) => (alignRight[i] ? text.padStart(widths[i]) : text.padEnd(widths[i]));
  const line = (cells) => `| ${cells.map(cell).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (alignRight[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}

export function environmentSection(env) {
  return [
    `# Store benchmark`,
    '',
    `- Date: ${env.date}`,
    `- Node: ${env.node}`,
    `- redis-server: ${env.redis} (started by the bench: --save "" --appendonly no, 127.0.0.1)`,
    `- CPU: ${env.cpuModel} x ${env.cores} cores`,
    `- Clients: ioredis ${env.ioredis}, rate-limiter-flexible ${env.rlflx}`,
    `- Load: closed loop of ${env.concurrency} concurrent workers over ${env.keyCount.toLocaleString('en-US')} keys ` +
      `(same seeded random sequence for every case); rule limit ${env.limit} per ${env.windowMs / 1000} s`,
    `- Each case: ${env.warmupMs / 1000} s warm-up, then ${env.measureMs / 1000} s measured (BENCH_SECONDS); ` +
      `fresh ioredis client per case, FLUSHALL between cases; latency per call with process.hrtime.bigint`,
  ].join('\n');
}

/**
 * One row per case. Redis rows: ratios vs rate-limiter-flexible Redis and vs the raw EVALSHA `return 1`, both at
 * the same autopipelining setting. Memory rows: ratio vs RateLimiterMemory (no EVALSHA ceiling applies).
 */
export function resultsTable(rows, reference) {
  const headers = ['case', 'decisions/s', 'p50 ms', 'p99 ms', 'vs rlflx', 'vs raw EVALSHA', 'allowed'];
  const cells = rows.map((row) => {
    const rlflx = reference(row, 'rlflx');
    const noop = row.group === 'redis' ? reference(row, 'noop') : undefined;
    return [
      row.name,
      perSecond(row.perSecond),
      ms(row.p50),
      ms(row.p99),
      ratio(rlflx ? row.perSecond / rlflx.perSecond : NaN),
      ratio(noop ? row.perSecond / noop.perSecond : NaN),
      percent(row.allowedShare),
    ];
  });
  return markdownTable(headers, cells, [false, true, true, true, true, true, true]);
}

export function goalsSection(goals) {
  const lines = goals.map((g) => `- **${g.met ? 'met' : 'NOT met'}**: ${g.text}`);
  const met = goals.filter((g) => g.met).length;
  return ['## Goals', '', ...lines, '', `${met} of ${goals.length} goals met.`].join('\n');
}

export const format = { perSecond, ratio, percent };
