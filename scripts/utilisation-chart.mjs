#!/usr/bin/env node
// Window utilisation and refusals over time, from real traffic: builds the package and the sample app, starts
// the sample app (on a throwaway redis-server, or the memory store with --memory or when redis-server is
// missing), drives HTTP traffic from 20 clients for 60 s in three phases (quiet, near the limit, over it),
// scrapes GET /metrics every second, and writes what the scrapes say as SVG charts and a CSV to docs/.
//
//   node scripts/utilisation-chart.mjs [--memory] [--no-build] [--seconds 60]
//
// The clients are 127.0.0.2 ... 127.0.0.21 (all of 127.0.0.0/8 is loopback on Linux), so the sample app's
// default rule (per client IP and route) sees 20 keys. Their arrivals are Poisson, from a seeded generator.
// Nothing is drawn by hand: every point is the difference of two consecutive scrapes.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { lineChart } from '../test/bench/support/svg-chart.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const useMemory = args.includes('--memory');
const build = !args.includes('--no-build');
const SECONDS = Number(args[args.indexOf('--seconds') + 1]) || 60;

/** The default rule under test: 20 requests per 10 s per client IP and route (sliding window). */
const LIMIT = 20;
const WINDOW_S = 10;
const CLIENTS = 20;
/** Requests per second of each client, by phase: a third of the run each. */
const PHASES = [
  { name: 'quiet', rate: () => 0.5 },
  { name: 'near the limit', rate: () => 1.6 },
  { name: 'over it', rate: (client) => (client % 2 === 0 ? 1.5 : 4) },
];
const RULE = 'default';
const OUT = `${root}docs/`;

/** mulberry32: a small seeded generator, so that a re-run sends the same arrival pattern. */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function hasRedisServer() {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function startRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(socket.end() && true)).on('error', () => resolve(false));
    });
    if (up) return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill() };
    await sleep(50);
  }
  child.kill();
  throw new Error(`redis-server did not start on port ${port}`);
}

/** Starts the built sample app on a free port; resolves with its base URL once it logs "Listening on". */
function startSample(env) {
  const child = spawn(process.execPath, ['sample-app/dist/main.js'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let log = '';
    const onData = (chunk) => {
      log += chunk;
      const match = /Listening on (http:\/\/\S+)/.exec(log.replace(/\x1b\[[0-9;]*m/g, ''));
      if (match) resolve({ url: match[1].replace('[::1]', '127.0.0.1'), stop: () => child.kill() });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`sample app exited (${code}) before listening:\n${log}`)));
  });
}

function get(url, agent) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', (error) => resolve({ status: 0, body: String(error) }));
  });
}

/** The rule's cumulative utilisation buckets and its decisions by result, from one scrape. */
function parseScrape(text) {
  const buckets = new Map();
  const results = {};
  for (const line of text.split('\n')) {
    const bucket = /^rate_limit_window_utilization_bucket\{(.*)\} (\S+)$/.exec(line);
    if (bucket && bucket[1].includes(`rule="${RULE}"`)) {
      const le = /le="([^"]+)"/.exec(bucket[1])[1];
      buckets.set(le === '+Inf' ? Infinity : Number(le), Number(bucket[2]));
    }
    const decision = /^rate_limit_decisions_total\{(.*)\} (\S+)$/.exec(line);
    if (decision && decision[1].includes(`rule="${RULE}"`)) results[/result="([^"]+)"/.exec(decision[1])[1]] = Number(decision[2]);
  }
  return { buckets: [...buckets.entries()].sort((a, b) => a[0] - b[0]), results };
}

/**
 * Prometheus's histogram_quantile over one interval's bucket increments: linear inside the bucket holding the
 * q-th sample; the highest finite bound when it is the +Inf bucket. NaN when there was no sample.
 */
function quantile(q, before, after) {
  const increments = after.map(([le, count], i) => [le, count - (before[i]?.[1] ?? 0)]);
  const total = increments.at(-1)?.[1] ?? 0;
  if (!total) return NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, count] of increments) {
    if (count >= rank) {
      if (le === Infinity) return lower;
      return lower + ((le - lower) * (rank - below)) / (count - below || 1);
    }
    lower = le;
    below = count;
  }
  return lower;
}

async function main() {
  if (build) {
    execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
    execFileSync('npx', ['tsc', '-p', 'sample-app/tsconfig.app.json'], { cwd: root, stdio: 'inherit' });
  }
  const redis = !useMemory && hasRedisServer() ? await startRedis() : undefined;
  const store = redis ? 'Redis' : 'memory';
  const sample = await startSample({
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_TOKEN: 'chart',
    RATE_LIMIT_DEFAULT_LIMIT: String(LIMIT),
    RATE_LIMIT_DEFAULT_WINDOW: `${WINDOW_S}s`,
    RATE_LIMIT_DEFAULT_ALGORITHM: 'sliding-window',
    RATE_LIMIT_KEY_PREFIX: `chart-${process.pid}`,
    ...(redis ? { REDIS_URL: redis.url } : { REDIS_URL: '' }),
  });
  console.log(`sample app on ${sample.url} (${store} store); ${CLIENTS} clients for ${SECONDS} s`);

  const started = Date.now();
  const phaseOf = (elapsedS) => PHASES[Math.min(PHASES.length - 1, Math.floor((elapsedS / SECONDS) * PHASES.length))];
  let stopping = false;
  const inFlight = new Set();
  const statuses = {};
  const clients = Array.from({ length: CLIENTS }, (_, i) => (async () => {
    const agent = new http.Agent({ keepAlive: true, localAddress: `127.0.0.${i + 2}` });
    const next = random(1000 + i);
    while (!stopping) {
      const rate = phaseOf((Date.now() - started) / 1000).rate(i);
      await sleep((-Math.log(1 - next()) / rate) * 1000);
      if (stopping) break;
      const request = get(`${sample.url}/api/items`, agent).then(({ status }) => (statuses[status] = (statuses[status] ?? 0) + 1));
      inFlight.add(request);
      request.finally(() => inFlight.delete(request));
    }
    agent.destroy();
  })());

  const scrapes = [];
  const scrapeAgent = new http.Agent({ keepAlive: true });
  for (let s = 0; s <= SECONDS; s++) {
    await sleep(Math.max(0, started + s * 1000 - Date.now()));
    const { status, body } = await get(`${sample.url}/metrics`, scrapeAgent);
    if (status !== 200) throw new Error(`GET /metrics answered ${status}`);
    scrapes.push({ t: s, ...parseScrape(body) });
  }
  stopping = true;
  await Promise.all(clients);
  await Promise.all(inFlight);
  scrapeAgent.destroy();
  sample.stop();
  redis?.stop();

  const rows = [];
  for (let i = 1; i < scrapes.length; i++) {
    const [a, b] = [scrapes[i - 1], scrapes[i]];
    const delta = (result) => (b.results[result] ?? 0) - (a.results[result] ?? 0);
    const samples = (b.buckets.at(-1)?.[1] ?? 0) - (a.buckets.at(-1)?.[1] ?? 0);
    rows.push({ t: b.t, phase: phaseOf(b.t - 0.5).name, p50: quantile(0.5, a.buckets, b.buckets), p90: quantile(0.9, a.buckets, b.buckets), samples, allowed: delta('allowed'), rejected: delta('rejected') });
  }
  mkdirSync(OUT, { recursive: true });
  writeFileSync(`${OUT}utilisation.csv`, ['second,phase,utilisation_p50,utilisation_p90,utilisation_samples,allowed_per_s,rejected_per_s', ...rows.map((r) => [r.t, r.phase, r.p50.toFixed(3), r.p90.toFixed(3), r.samples, r.allowed, r.rejected].join(','))].join('\n') + '\n');

  const points = (key) => rows.filter((r) => Number.isFinite(r[key])).map((r) => [r.t, r[key]]);
  const phaseNote = PHASES.map((p, i) => `${Math.round((i * SECONDS) / PHASES.length)}-${Math.round(((i + 1) * SECONDS) / PHASES.length)} s ${p.name}`).join(', ');
  const setting = `${store} store, ${LIMIT} per ${WINDOW_S} s per IP, ${CLIENTS} clients`;
  console.log(`phases: ${phaseNote}`);
  writeFileSync(`${OUT}utilisation.svg`, lineChart({
    title: `Sample app, default rule: window utilisation each second (${setting})`,
    xLabel: `seconds (${phaseNote})`,
    yLabel: 'share of the limit in use at decision time',
    series: [
      { name: 'p90 utilisation (histogram_quantile over each second)', points: points('p90') },
      { name: 'p50 utilisation', points: points('p50'), dash: '5 4' },
    ],
    refLines: [{ y: 0.9, label: 'HighWindowUtilization threshold 0.9', color: '#d62728' }, { y: 1, label: 'limit', color: '#555' }],
    yMin: 0,
    // Room above the limit line for refused requests' samples, which land above 1.
    yMax: Math.max(1.3, ...points('p90').map(([, v]) => v + 0.1)),
    width: 1100,
  }));
  writeFileSync(`${OUT}refusals.svg`, lineChart({
    title: `Sample app, default rule: decisions per second (${setting})`,
    xLabel: `seconds (${phaseNote})`,
    yLabel: 'requests per second',
    series: [
      { name: 'admitted (rate_limit_decisions_total{result="allowed"})', points: rows.map((r) => [r.t, r.allowed]), color: '#2ca02c' },
      { name: 'refused (rate_limit_decisions_total{result="rejected"})', points: rows.map((r) => [r.t, r.rejected]), color: '#d62728' },
    ],
    step: true,
    yMin: 0,
    width: 1100,
  }));
  console.log(`HTTP statuses: ${JSON.stringify(statuses)}`);
  for (const phase of PHASES) {
    const of = rows.filter((r) => r.phase === phase.name);
    const mean = (key) => of.reduce((sum, r) => sum + (Number.isFinite(r[key]) ? r[key] : 0), 0) / of.length;
    console.log(`${phase.name}: p90 ${mean('p90').toFixed(2)}, p50 ${mean('p50').toFixed(2)}, admitted ${mean('allowed').toFixed(1)}/s, refused ${mean('rejected').toFixed(1)}/s`);
  }
  console.log(`wrote docs/utilisation.svg, docs/refusals.svg, docs/utilisation.csv`);
}

await main();
