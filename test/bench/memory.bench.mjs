// Memory bench: Redis bytes per key for each of our algorithms at limits 10, 100 and 1000, next to the keys of
// rate-limiter-flexible (RateLimiterRedis) and @nestjs/throttler's Redis storage (@nest-lab/throttler-storage-redis).
// Every key is filled to its limit, the worst case (the sliding log holds one sorted-set entry per admitted unit;
// the sliding window has all its cells). Two measures: MEMORY USAGE of every key (SAMPLES 0: exact for
// collections; it counts the key's own allocations, not the expiry entry), and the growth of INFO used_memory
// over the whole fill divided by the key count (everything the keys cost the server: dict and expires-dict
// entries, table growth, allocator rounding). The O(1) algorithms and rate-limiter-flexible are measured again under
// maxmemory-policy allkeys-lru, where Redis gives no value a shared integer (see the report's notes).
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
// An eviction policy that turns off Redis's shared integers (any LRU or LFU one), with room for everything measured.
const LRU = { policy: 'allkeys-lru', maxmemory: String(64 * 1024 ** 3) };
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

/**
 * used_memory once it stops moving: a dict that grew during the fill keeps its old table until it is rehashed,
 * which serverCron finishes in its own time (every 100 ms at hz 10); read too soon, 8,192 old buckets (64 KB)
 * showed as 6-7 B per key in some cases and not others.
 */
async function settledUsedMemory(admin) {
  let last = await usedMemory(admin);
  for (let tries = 0; tries < 20; tries++) {
    await sleep(150);
    const now = await usedMemory(admin);
    if (now === last) return now;
    last = now;
  }
  return last;
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
  const lengths = names.map((n) => Buffer.byteLength(n));
  const keyNameBytes = { min: Math.min(...lengths), max: Math.max(...lengths) };
  const sample = names[0];
  return { keys: names.length, bytes, keyNameBytes, encoding: `${await admin.type(sample)} / ${await admin.object('ENCODING', sample)}`, sample };
}

async function measureCase(port, admin, subject, limit, server = null) {
  if (server) await admin.config('SET', 'maxmemory', server.maxmemory, 'maxmemory-policy', server.policy);
  // Scripts are loaded into the server's cache by a first call: do it before the baseline, so it is not counted.
  const warm = new Redis({ host: '127.0.0.1', port });
  await subject.fill(warm, limit, 1);
  await warm.quit();
  await admin.flushdb();
  const before = await settledUsedMemory(admin);
  // Filled on its own connection, closed before measuring, so no client buffer is counted.
  const client = new Redis({ host: '127.0.0.1', port });
  await subject.fill(client, limit);
  await client.quit();
  const after = await settledUsedMemory(admin);
  const scanned = await scanKeys(admin);
  await admin.flushdb();
  if (server) await admin.config('SET', 'maxmemory', '0', 'maxmemory-policy', 'noeviction');
  return {
    subject: subject.name,
    algorithm: subject.algorithm,
    limit,
    policy: server?.policy ?? 'noeviction',
    ...scanned,
    keysPerTracker: scanned.keys / KEY_COUNT,
    usagePerKey: scanned.bytes / KEY_COUNT,
    deltaPerKey: (after - before) / KEY_COUNT,
  };
}

// ---- report ----

const round = (n) => Math.round(n).toLocaleString('en-US');
const times = (n) => `${n.toFixed(2)}x`;

/** rate-limiter-flexible's row for the same limit, measured under the same eviction policy. */
const peerOf = (rows, row) => rows.find((r) => r.subject === RLFLX && r.limit === row.limit && r.policy === row.policy);

function memoryTable(rows) {
  const peer = (row) => peerOf(rows, row);
  const headers = ['limiter', 'limit', 'type / encoding', 'keys per tracker', 'key name bytes', 'MEMORY USAGE B/key', 'used_memory delta B/key', 'vs rlflx (USAGE)', 'vs rlflx (delta)'];
  const cells = rows.map((r) => [
    r.subject,
    String(r.limit),
    r.encoding,
    String(r.keysPerTracker),
    r.keyNameBytes.min === r.keyNameBytes.max ? String(r.keyNameBytes.min) : `${r.keyNameBytes.min}-${r.keyNameBytes.max}`,
    round(r.usagePerKey),
    round(r.deltaPerKey),
    times(r.usagePerKey / peer(r).usagePerKey),
    times(r.deltaPerKey / peer(r).deltaPerKey),
  ]);
  return markdownTable(headers, cells, [false, true, false, true, true, true, true, true, true]);
}

function goals(rows, lruRows) {
  const judge = (algorithm, factor) => {
    const ratiosOf = (set) =>
      set
        .filter((r) => r.algorithm === algorithm)
        .map((r) => {
          const ref = peerOf(set, r);
          return { limit: r.limit, usage: r.usagePerKey / ref.usagePerKey, delta: r.deltaPerKey / ref.deltaPerKey };
        });
    const ratios = ratiosOf(rows);
    const detail = ratios.map((x) => `limit ${x.limit}: ${times(x.usage)} by MEMORY USAGE, ${times(x.delta)} by used_memory`).join('; ');
    const lru = ratiosOf(lruRows);
    const lruDetail = lru.length
      ? `; both under allkeys-lru, where Redis shares no integer (MEMORY USAGE / used_memory): ${lru.map((x) => `limit ${x.limit}: ${times(x.usage)} / ${times(x.delta)}`).join('; ')}`
      : '';
    return {
      usageMet: ratios.every((x) => x.usage <= factor),
      deltaMet: ratios.every((x) => x.delta <= factor),
      text: `${algorithm} <= ${factor === 1 ? '' : `${factor} x `}rate-limiter-flexible's bytes per key: ${detail}`,
      lruDetail,
    };
  };
  return [...O1.map((a) => judge(a, 1)), judge('sliding-window', 2)].map((g) => ({
    met: g.usageMet && g.deltaMet,
    text: (g.usageMet === g.deltaMet ? g.text : `${g.text} (met by ${g.usageMet ? 'MEMORY USAGE' : 'used_memory'} only)`) + g.lruDetail,
  }));
}

/**
 * MEMORY USAGE of a key holding a large integer, for names of 1 to 64 bytes, as runs of lengths that cost the same:
 * what the allocator makes of a key's name, on this server.
 */
async function nameBlocks(admin) {
  const runs = [];
  for (let length = 1; length <= 64; length++) {
    const name = 'n'.repeat(length);
    await admin.set(name, '1000000000000000');
    const usage = await admin.memory('USAGE', name, 'SAMPLES', 0);
    await admin.del(name);
    const last = runs.at(-1);
    if (last?.usage === usage) last.to = length;
    else runs.push({ from: length, to: length, usage });
  }
  return runs;
}

const range = (values) => {
  const [min, max] = [Math.min(...values), Math.max(...values)];
  return min === max ? String(min) : `${min}-${max}`;
};

/** What the O(1) algorithms' bytes over rate-limiter-flexible's are, from this run's figures. */
function o1Notes(rows, lruRows, blocks) {
  const ours = rows.filter((r) => O1.includes(r.algorithm));
  const peers = rows.filter((r) => r.subject === RLFLX);
  const names = (set) => range(set.flatMap((r) => [r.keyNameBytes.min, r.keyNameBytes.max]));
  const block = (length) => blocks.find((b) => b.from <= length && length <= b.to);
  const blocksOf = (set) => [...new Set(set.flatMap((r) => [block(r.keyNameBytes.min), block(r.keyNameBytes.max)]))];
  const shared = blocksOf([...ours, ...peers]);
  const nameText =
    shared.length === 1
      ? `Redis keeps every name of ${shared[0].from}-${shared[0].to} bytes in one allocation (MEMORY USAGE of a key with an integer value: ${shared[0].usage} B), so here the tag costs nothing`
      : `their names fall in ${shared.length} allocation classes of this server (${shared.map((b) => `${b.from}-${b.to} bytes: ${b.usage} B`).join(', ')}), so here the tag costs bytes`;
  const gap = ours.map((r) => r.deltaPerKey - peerOf(rows, r).deltaPerKey);
  const lruOurs = lruRows.filter((r) => O1.includes(r.algorithm));
  const lruPeers = lruRows.filter((r) => r.subject === RLFLX);
  const lruText = lruRows.length
    ? ` Under an LRU or LFU maxmemory-policy (measured: allkeys-lru) Redis shares no integer, and rate-limiter-flexible's key costs ${range(lruPeers.map((r) => Math.round(r.deltaPerKey)))} B by used_memory to our ${range(lruOurs.map((r) => Math.round(r.deltaPerKey)))} B (table below); so it does for a count of 10,000 or more (Redis shares 0-9,999 only).`
    : '';
  return [
    `**The O(1) algorithms next to rate-limiter-flexible.** Their key names are ${names(ours)} bytes to its ${names(peers)}: they carry the rule's name and a tag of what gives ` +
      `the state its meaning (\`fw1h\`, \`tb6m\`, \`gc3600ms\`), so that a live change of the window or rate starts afresh instead of misreading the old state ` +
      `(README, "A live rule change"). ${nameText}. What remains, ${range(gap.map(Math.round))} B per key by used_memory, is the value: ` +
      `rate-limiter-flexible's is its count (${LIMITS.join(', ')} here), which Redis takes from its shared integers 0-9,999 and so allocates nothing for; ours is an ` +
      `instant in µs (fixed window: its window's end + the count; token bucket: when the bucket is full again; GCRA: the TAT), an object of 16 B of its own.${lruText} ` +
      `What the instant buys: token bucket and GCRA have no state without one; the fixed window's end in the value means a count is never read as another window's ` +
      `whenever Redis happens to expire the key (lazy expiry, a script's frozen clock), and decisions can follow the store's own clock (RedisStore's \`clock\` option, the testing kit) instead of the key's TTL.`,
  ].join('\n');
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

function report(redisVersion, rows, lruRows, blocks) {
  const header = environmentHeader('Memory benchmark', redisVersion, [
    `${KEY_COUNT.toLocaleString('en-US')} trackers per case (client IPs 203.0.x.y), each filled to the limit; window 1 h so nothing expires meanwhile; FLUSHDB between cases on the bench's own server`,
    `Ours: RedisStore, default prefix "rl", rule "api"; sliding log filled with one request of cost = limit (limit entries); sliding window with the limit spread over all ${SEGMENTS} cells (clock injected to step across them); others with one request of cost = limit`,
    `${RLFLX}: RateLimiterRedis, default keyPrefix "rlflx", points = limit, consume(tracker, limit)`,
    `Again under maxmemory-policy allkeys-lru (maxmemory 64 GB: nothing evicted), where Redis shares no integer: ${O1.join(', ')} and ${RLFLX}`,
    `${THROTTLER}: increment() once, as ThrottlerGuard would, on the guard's default key (sha256 hex of controller-handler-name-tracker), then INCRBY limit - 1 on its hit key: the state \`limit\` increments leave`,
  ]);
  const notes =
    'MEMORY USAGE (SAMPLES 0) counts a key\'s name, value and dict entry; it does not count the entry in the expires dict that every ' +
    'key with a TTL also has, and it counts 16 bytes for a small integer value (< 10,000) that Redis actually takes from its shared ' +
    'integers (the peers\' counters hold the count itself, so they get them free; our fixed window holds end-of-window µs + count). ' +
    'used_memory delta is what the server really grew by, divided by the tracker count: it includes the expires-dict entries and the ' +
    'hash tables\' growth (a power of two: compare within one key count). "key name bytes" is the shortest and the longest key name.';
  const goalList = goals(rows, lruRows);
  return [
    header,
    '',
    '## Results',
    '',
    memoryTable(rows),
    '',
    notes,
    '',
    o1Notes(rows, lruRows, blocks),
    '',
    '### Under maxmemory-policy allkeys-lru (no shared integers)',
    '',
    memoryTable(lruRows),
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
  const lruRows = [];
  let blocks = [];
  try {
    const measure = async (subject, limit, policy) => {
      const started = performance.now();
      const row = await measureCase(server.port, admin, subject, limit, policy);
      process.stderr.write(
        `memory: ${subject.name} limit ${limit}${policy ? ` (${policy.policy})` : ''}: ${round(row.usagePerKey)} B/key (MEMORY USAGE), ${round(row.deltaPerKey)} B/key (used_memory) ` +
          `in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
      );
      return row;
    };
    blocks = await nameBlocks(admin);
    for (const limit of LIMITS) {
      for (const subject of subjects) rows.push(await measure(subject, limit));
    }
    for (const limit of LIMITS) {
      for (const subject of subjects.filter((x) => O1.includes(x.algorithm) || x === rlflxSubject)) lruRows.push(await measure(subject, limit, LRU));
    }
  } finally {
    await admin.quit().catch(() => admin.disconnect());
    await server.stop();
  }
  const text = report(version, rows, lruRows, blocks);
  process.stdout.write(text);
  writeResult('memory.md', text);
  writeResult('memory-bytes-per-key.svg', chart(rows));
}

runMain('memory bench', main);
