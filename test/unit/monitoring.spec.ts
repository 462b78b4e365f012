import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { createMetrics } from '../../lib/observability/rate-limit.metrics.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const RULES = 'monitoring/prometheus/rate-limit.rules.yml';
const DASHBOARD = 'monitoring/grafana/rate-limit.dashboard.json';
const RULES_TEST = 'test/unit/monitoring.rules-test.yml';

// js-yaml (a devDependency) has no types of its own, so only `load` is typed here.
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
}

interface Panel {
  title: string;
  targets?: { expr: string }[];
}

const alertRules = (): AlertRule[] =>
  (yaml.load(readFileSync(root + RULES, 'utf8')) as { groups: { rules: AlertRule[] }[] }).groups.flatMap((g) => g.rules);

const dashboard = () =>
  JSON.parse(readFileSync(root + DASHBOARD, 'utf8')) as { panels: Panel[]; templating: { list: { name: string; query?: string | { query: string } }[] } };

/** Every sample name the library exports (a histogram's `_bucket`, `_sum` and `_count`), read from a live registry. */
async function exportedNames(): Promise<Set<string>> {
  const registry = new Registry();
  await createMetrics({ registry });
  const names = new Set<string>();
  for (const m of await registry.getMetricsAsJSON()) {
    if (String(m.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(m.name + suffix);
    else names.add(m.name);
  }
  return names;
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects: identifiers left once strings, label matchers, ranges and
 * grouping clauses are removed, that are neither a function call nor an operator keyword.
 */
function selectedMetrics(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)]
    .filter((m) => !/^\s*\(/.test(bare.slice(m.index! + m[0].length)) && !KEYWORDS.has(m[0].toLowerCase()))
    .map((m) => m[0]);
}

describe('monitoring/: Prometheus alert rules and Grafana dashboard', () => {
  it('declares the five alerts: high window utilisation, refusals over 10%, store errors, circuit open, shadow refusals', () => {
    const rules = alertRules();
    expect(rules.map((r) => [r.alert, r.for])).toEqual([
      ['HighWindowUtilization', '1m'],
      ['RateLimitRefusingOverTenPercent', '5m'],
      ['RateLimitStoreErrors', '1m'],
      ['RateLimitCircuitOpen', '1m'],
      ['RateLimitShadowRefusals', '1m'],
    ]);
    expect(rules[0].expr).toMatch(/histogram_quantile\(0\.9,.*\) > 0\.9\s*$/);
    expect(rules[4].expr).toContain('result="shadow_rejected"');
  });

  it('selects in every alert expression only metrics the library registers', async () => {
    const exported = await exportedNames();
    for (const rule of alertRules()) {
      const used = selectedMetrics(rule.expr);
      expect({ alert: rule.alert, used: used.length > 0 }).toEqual({ alert: rule.alert, used: true });
      expect({ alert: rule.alert, unknown: used.filter((name) => !exported.has(name)) }).toEqual({ alert: rule.alert, unknown: [] });
    }
  });

  it("selects in every dashboard query and variable only metrics the library registers", async () => {
    const exported = await exportedNames();
    const { panels, templating } = dashboard();
    const queries = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: p.title, expr: t.expr })));
    for (const v of templating.list) {
      const query = typeof v.query === 'object' ? v.query.query : v.query;
      // label_values(<metric>, <label>) is Grafana's, not PromQL: its first argument is the selector.
      const selector = query && /^label_values\(([^,]+),/.exec(query)?.[1];
      if (selector) queries.push({ where: `variable ${v.name}`, expr: selector });
    }
    expect(queries.length).toBeGreaterThanOrEqual(6);
    for (const { where, expr } of queries) {
      const used = selectedMetrics(expr);
      expect({ where, used: used.length > 0, unknown: used.filter((name) => !exported.has(name)) }).toEqual({ where, used: true, unknown: [] });
    }
  });

  it('charts utilisation p50 and p90 per rule, decisions by result, refusal ratio, store errors, circuit state and latency', () => {
    const exprs = dashboard().panels.map((p) => (p.targets ?? []).map((t) => t.expr).join('\n'));
    const charted = (pattern: RegExp) => exprs.some((e) => pattern.test(e));
    expect(charted(/histogram_quantile\(0\.9, sum by \(rule, le\) \(rate\(rate_limit_window_utilization_bucket/)).toBe(true);
    expect(charted(/histogram_quantile\(0\.5, sum by \(rule, le\) \(rate\(rate_limit_window_utilization_bucket/)).toBe(true);
    expect(charted(/sum by \(result\) \(rate\(rate_limit_decisions_total/)).toBe(true);
    expect(charted(/result="rejected".*\/ sum by \(rule\)/)).toBe(true);
    expect(charted(/rate_limit_store_errors_total/)).toBe(true);
    expect(charted(/rate_limit_circuit_state/)).toBe(true);
    expect(charted(/rate_limit_decision_duration_seconds_bucket/)).toBe(true);
  });

  it('ships both files in the package', () => {
    // npm's own warnings (about the machine's npmrc, say) go to its stderr: kept off the test output.
    const listing = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const [pack] = JSON.parse(listing) as { files: { path: string }[] }[];
    expect(pack.files.map((f) => f.path)).toEqual(expect.arrayContaining([RULES, DASHBOARD]));
  });

  const promtool = spawnSync('promtool', ['--version']).status === 0;
  it(
    promtool
      ? 'passes `promtool check rules`, and each alert fires on its series in monitoring.rules-test.yml and only there'
      : 'promtool is not installed (Debian: apt-get install prometheus): the parsed checks above stand in for `promtool check rules`',
    () => {
      if (!promtool) {
        expect(alertRules()).toHaveLength(5);
        return;
      }
      const check = spawnSync('promtool', ['check', 'rules', RULES], { cwd: root, encoding: 'utf8' });
      expect({ status: check.status, out: check.stdout + check.stderr }).toEqual({ status: 0, out: expect.stringContaining('SUCCESS: 5 rules found') });
      const unit = spawnSync('promtool', ['test', 'rules', RULES_TEST], { cwd: root, encoding: 'utf8' });
      expect({ status: unit.status, out: unit.stdout + unit.stderr }).toEqual({ status: 0, out: expect.stringContaining('SUCCESS') });
    },
  );
});
