// Memory bench: Redis bytes per key for each of our algorithms at limits 10, 100 and 1000, next to the keys of
// rate-limiter-flexible (RateLimiterRedis) and @nestjs/throttler's Redis storage (@nest-lab/throttler-storage-redis).
// Every key is filled to its limit, the worst case (the sliding log holds one sorted-set entry per admitted unit;
// the sliding window has all its cells). Two measures: MEMORY USAGE of every key (SAMPLES 0: exact for
// collections; it counts the key's own allocations, not the expiry entry), and the growth of INFO used_memory
// over the whole fill divided by the key count (everything the keys cost the server: dict and expires-dict
// entries, table growth, allocator rounding).
//
// Run: `npm run build && node test/bench/memory.bench.mjs` (or `npm run bench`). Env: MEMORY_KEYS (trackers per
// case, default 10,000; the sliding log at limit 1000 then holds 10 million entries, about 1 GB).
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { RedisStore, defineRule } from '../../dist/index.js';
import { envInteger, environmentHeader, runMain, startGuardedServer, writeResult } from './support/environment.mjs';
import { markdownTable, goalsSection } from './support/report.mjs';
import { barChart } from './support/svg-chart.mjs';

const ALGORITHMS = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
const O1 = ['fixed-window', 'token-bucket', 'gcra'];
const LIMITS = [10, 100, 1000];
const KEY_COUNT = envInteger('MEMORY_KEYS', 10_000);
// Long enough that nothing expires while a case is filled and measured.
const WINDOW_MS = 3_600_000;
const SEGMENTS = 10;
const IN_FLIGHT = 500;
const RLFLX = 'rate-limiter-flexible';
const THROTTLER = '@nestjs/throttler (redis storage)';

/** Trackers as a limiter by client IP sees them. */
const tracker = (i) => `203.0.${(i >> 8) & 255}.${i & 255}`;

/** Runs `fill(i)` for every tracker, IN_FLIGHT at a time. */
async function forEachTracker(fill) {
  for (let from = 0; from < KEY_COUNT; from += IN_FLIGHT) {
    const batch = [];
    for (let i = from; i < Math.min(KEY_COUNT, from + IN_FLIGHT); i++) batch.push(fill(i));
    await Promise.all(batch);
  }
}

// ---- subjects: each fills every tracker's key to `limit` on its own client ----

function ourSubject(algorithm) {
  return {
    name: algorithm,
    algorithm,
    async fill(client, limit, only = KEY_COUNT) {
      let now = Date.now();
      const store = new RedisStore(client, { clock: () => now });
      const rule = defineRule({ algorithm, limit, window: WINDOW_MS, ...(algorithm === 'sliding-window' ? { segments: SEGMENTS } : {}) }, 'api');
      if (algorithm !== 'sliding-window') {
        await forEachTracker((i) => (i < only ? store.consume(tracker(i), rule, limit) : null));
        return;
      }
      // Worst case for the sliding window: every cell holds a share of the limit (one hash field per cell).
      const cell = WINDOW_MS / SEGMENTS;
      const base = now - (SEGMENTS - 1) * cell;
      for (let s = 0; s < SEGMENTS; s++) {
        const share = Math.floor(limit / SEGMENTS) + (s < limit % SEGMENTS ? 1 : 0);
        now = base + s * cell;
        if (share > 0) await forEachTracker((i) => (i < only ? store.consume(tracker(i), rule, share) : null));
      }
    },
  };
}

const rlflxSubject = {
  name: RLFLX,
  async fill(client, limit, only = KEY_COUNT) {
    // Default keyPrefix ('rlflx'); one consume of `limit` points writes what `limit` consumes of 1 would.
    const limiter = new RateLimiterRedis({ storeClient: client, points: limit, duration: WINDOW_MS / 1000 });
    await forEachTracker((i) => (i < only ? limiter.consume(tracker(i), limit) : null));
  },
};

const throttlerSubject = {
  name: THROTTLER,
  async fill(client, limit, only = KEY_COUNT) {
    // The key ThrottlerGuard builds by default: sha256 of `<Controller>-<handler>-<throttler name>-<tracker>`.
    const storage = new ThrottlerStorageRedisService(client);
    await forEachTracker(async (i) => {
      if (i >= only) return;
      const key = createHash('sha256').update(`ApiController-list-default-${tracker(i)}`).digest('hex');
      await storage.increment(key, WINDOW_MS, limit, WINDOW_MS, 'default');
      // The rest of the limit in one step: the hit counter ends where `limit` calls would leave it (its script
      // INCRs the same key each time), without 10 million round trips at limit 1000.
      if (limit > 1) await client.incrby(`{${key}:default}:hits`, limit - 1);
    });
  },
};

// ---- measuring ----

async function usedMemory(admin) {
  const info = await admin.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)[1]);
}

/** Every key of the (otherwise empty) database: name, MEMORY USAGE ... SAMPLES 0, and one value encoding. */
async function scanKeys(admin) {
  const names = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'COUNT', 1000);
    names.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  let bytes = 0;
  for (let from = 0; from < names.length; from += 1000) {
    const pipeline = admin.pipeline();
    for (const name of names.slice(from, from + 1000)) pipeline.memory('USAGE', name, 'SAMPLES', 0);
    for (const [error, usage] of await pipeline.exec()) {
      if (error) throw error;
      bytes += usage;
    }
  }
  const keyNameBytes = names.reduce((sum, n) => sum + Buffer.byteLength(n), 0) / names.length;
  const sample = names[0];
  return { keys: names.length, bytes, keyNameBytes, encoding: `${await admin.type(sample)} / ${await admin.object('ENCODING', sample)}`, sample };
}

async function measureCase(port, admin, subject, limit) {
  // Scripts are loaded into the server's cache by a first call: do it before the baseline, so it is not counted.
  const warm = new Redis({ host: '127.0.0.1', port });
  await subject.fill(warm, limit, 1);
  await warm.quit();
  await admin.flushdb();
  await sleep(50);
  const before = await usedMemory(admin);
  // Filled on its own connection, closed before measuring, so no client buffer is counted.
  const client = new Redis({ host: '127.0.0.1', port });
  await subject.fill(client, limit);
  await client.quit();
  await sleep(50);
  const after = await usedMemory(admin);
  const scanned = await scanKeys(admin);
  await admin.flushdb();
  return {
    subject: subject.name,
    algorithm: subject.algorithm,
    limit,
    ...scanned,
    keysPerTracker: scanned.keys / KEY_COUNT,
    usagePerKey: scanned.bytes / KEY_COUNT,
    deltaPerKey: (after - before) / KEY_COUNT,
  };
}

// ---- report ----

const round = (n) => Math.round(n).toLocaleString('en-US');
const times = (n) => `${n.toFixed(2)}x`;

function memoryTable(rows) {
  const peer = (row) => rows.find((r) => r.subject === RLFLX && r.limit === row.limit);
  const headers = ['limiter', 'limit', 'type / encoding', 'keys per tracker', 'key name bytes', 'MEMORY USAGE B/key', 'used_memory delta B/key', 'vs rlflx (USAGE)', 'vs rlflx (delta)'];
  const cells = rows.map((r) => [
    r.subject,
    String(r.limit),
    r.encoding,
    String(r.keysPerTracker),
    String(Math.round(r.keyNameBytes)),
    round(r.usagePerKey),
    round(r.deltaPerKey),
    times(r.usagePerKey / peer(r).usagePerKey),
    times(r.deltaPerKey / peer(r).deltaPerKey),
  ]);
  return markdownTable(headers, cells, [false, true, false, true, true, true, true, true, true]);
}

function goals(rows) {
  const judge = (algorithm, factor) => {
    const ours = rows.filter((r) => r.algorithm === algorithm);
    const ratios = ours.map((r) => {
      const ref = rows.find((p) => p.subject === RLFLX && p.limit === r.limit);
      return { limit: r.limit, usage: r.usagePerKey / ref.usagePerKey, delta: r.deltaPerKey / ref.deltaPerKey };
    });
    const detail = ratios.map((x) => `limit ${x.limit}: ${times(x.usage)} by MEMORY USAGE, ${times(x.delta)} by used_memory`).join('; ');
    return {
      usageMet: ratios.every((x) => x.usage <= factor),
      deltaMet: ratios.every((x) => x.delta <= factor),
      text: `${algorithm} <= ${factor === 1 ? '' : `${factor} x `}rate-limiter-flexible's bytes per key: ${detail}`,
    };
  };
  return [...O1.map((a) => judge(a, 1)), judge('sliding-window', 2)].map((g) => ({
    met: g.usageMet && g.deltaMet,
    text: g.usageMet === g.deltaMet ? g.text : `${g.text} (met by ${g.usageMet ? 'MEMORY USAGE' : 'used_memory'} only)`,
  }));
}

function chart(rows) {
  const subjects = [...new Set(rows.map((r) => r.subject))];
  return barChart({
    title: `Redis bytes per key, filled to the limit (used_memory growth over ${KEY_COUNT.toLocaleString('en-US')} keys / keys)`,
    xLabel: 'limit (requests per window)',
    yLabel: 'bytes per key (log scale)',
    yLog: true,
    categories: LIMITS.map((l) => `limit ${l}`),
    series: subjects.map((s) => ({ name: s, values: LIMITS.map((l) => rows.find((r) => r.subject === s && r.limit === l)?.deltaPerKey ?? null).map((v) => v && Math.round(v)) })),
  });
}

function report(redisVersion, rows) {
  const header = environmentHeader('Memory benchmark', redisVersion, [
    `${KEY_COUNT.toLocaleString('en-US')} trackers per case (client IPs 203.0.x.y), each filled to the limit; window 1 h so nothing expires meanwhile; FLUSHDB between cases on the bench's own server`,
    `Ours: RedisStore, default prefix "rl", rule "api"; sliding log filled with one request of cost = limit (limit entries); sliding window with the limit spread over all ${SEGMENTS} cells (clock injected to step across them); others with one request of cost = limit`,
    `${RLFLX}: RateLimiterRedis, default keyPrefix "rlflx", points = limit, consume(tracker, limit)`,
    `${THROTTLER}: increment() once, as ThrottlerGuard would, on the guard's default key (sha256 hex of controller-handler-name-tracker), then INCRBY limit - 1 on its hit key: the state \`limit\` increments leave`,
  ]);
  const notes =
    'MEMORY USAGE (SAMPLES 0) counts a key\'s name, value and dict entry; it does not count the entry in the expires dict that every ' +
    'key with a TTL also has, and it counts 16 bytes for a small integer value (< 10,000) that Redis actually takes from its shared ' +
    'integers (the peers\' counters hold the count itself, so they get them free; our fixed window holds end-of-window µs + count). ' +
    'used_memory delta is what the server really grew by, divided by the tracker count: it includes the expires-dict entries and the ' +
    'hash tables\' growth (a power of two: compare within one key count). "key name bytes" is the mean length of the key names.';
  const goalList = goals(rows);
  return [
    header,
    '',
    '## Results',
    '',
    memoryTable(rows),
    '',
    notes,
    '',
    '![bytes per key](memory-bytes-per-key.svg)',
    '',
    goalsSection(goalList),
    '',
  ].join('\n');
}

async function main() {
  const { server, version } = await startGuardedServer();
  const admin = new Redis({ host: '127.0.0.1', port: server.port });
  const subjects = [...ALGORITHMS.map(ourSubject), rlflxSubject, throttlerSubject];
  const rows = [];
  try {
    for (const limit of LIMITS) {
      for (const subject of subjects) {
        const started = performance.now();
        const row = await measureCase(server.port, admin, subject, limit);
        rows.push(row);
        process.stderr.write(
          `memory: ${subject.name} limit ${limit}: ${round(row.usagePerKey)} B/key (MEMORY USAGE), ${round(row.deltaPerKey)} B/key (used_memory) ` +
            `in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
        );
      }
    }
  } finally {
    await admin.quit().catch(() => admin.disconnect());
    await server.stop();
  }
  const text = report(version, rows);
  process.stdout.write(text);
  writeResult('memory.md', text);
  writeResult('memory-bytes-per-key.svg', chart(rows));
}

runMain('memory bench', main);
