/**
 * Traffic on one key while its hash slot moves between the masters of a real Redis Cluster, through the module's
 * own Cluster client (`store: { cluster: nodes }`: no offline queue, no retries or resends of commands in flight,
 * TRYAGAIN retried every 20 ms). The scripts touch two keys (state and lockout) of one slot, so while the slot is
 * open (MIGRATING/IMPORTING) Redis answers them TRYAGAIN or ASK, and ioredis retries within its redirection budget
 * (maxRedirections 16). A fixed clock: only atomicity and counting are tested. The file moves slots around: with
 * REDIS_CLUSTER_NODES, those of that cluster.
 */
import { spawn } from 'node:child_process';
import { Test, type TestingModule } from '@nestjs/testing';
import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import {
  defineRule,
  RATE_LIMIT_STORE,
  RateLimitModule,
  RateLimitService,
  ruleKeys,
  type Decision,
  type RateLimitModuleOptions,
  type RateLimitRule,
  type RedisStore,
  type ResilientStore,
} from '../../lib/index.js';
import { CapturingLogger } from '../e2e/support/rate-limit-config.js';
import { openClusterClient, type OpenClient } from '../support/redis-clients.js';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis-server.js';

const HOOK_TIMEOUT_MS = 60_000;
const NOW = 1_700_000_000_000;
const WORKERS = 16;
/** Large enough to outlast the moves (about 10,000 calls per second here), small enough to run out soon after. */
const LIMIT = 20_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Concurrent callers of one decision, counting outcomes until stopped. */
class Traffic {
  admitted = 0;
  refused = 0;
  degraded = 0;
  readonly errors = new Map<string, number>();
  private running = true;
  private readonly workers: Promise<void>[];

  constructor(decide: () => Promise<Decision>) {
    this.workers = Array.from({ length: WORKERS }, async () => {
      while (this.running) {
        try {
          const d = await decide();
          if (d.degraded) this.degraded++;
          else if (d.allowed) this.admitted++;
          else this.refused++;
        } catch (error) {
          const message = (error as Error).message.replace(/\d+/g, 'N');
          this.errors.set(message, (this.errors.get(message) ?? 0) + 1);
        }
        await new Promise(setImmediate); // let the migration's own commands through
      }
    });
  }
  get errorCount(): number {
    return [...this.errors.values()].reduce((a, b) => a + b, 0);
  }
  async until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what} (${JSON.stringify(this.summary())})`);
      await sleep(5);
    }
  }
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }
  summary() {
    return { admitted: this.admitted, refused: this.refused, degraded: this.degraded, errors: Object.fromEntries(this.errors) };
  }
}

describe('decisions on a key while its slot migrates between the masters of a real Redis Cluster', () => {
  let redis: TestRedisCluster;
  const admin = new Map<number, Redis>();
  const ids = new Map<number, string>();
  const contexts: TestingModule[] = [];

  beforeAll(async () => {
    redis = await startRedisCluster({ masters: 3 });
    for (const port of redis.ports) {
      const node = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0 });
      admin.set(port, node);
      ids.set(port, String(await node.call('CLUSTER', 'MYID')));
    }
  }, HOOK_TIMEOUT_MS);
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await Promise.all([...admin.values()].map((n) => n.quit().catch(() => n.disconnect())));
    await redis?.stop();
  }, HOOK_TIMEOUT_MS);

  /** The module on the cluster (it creates the Cluster client), without HTTP. */
  async function startModule(options: RateLimitModuleOptions = {}) {
    const keyPrefix = uniquePrefix();
    const logger = new CapturingLogger();
    const ctx = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ store: { cluster: redis.nodes }, keyPrefix, clock: () => NOW, timeoutMs: 2_000, ...options })],
    })
      .setLogger(logger) // the failures the last test provokes are expected: kept, not printed
      .compile();
    await ctx.init(); // connects the Cluster
    contexts.push(ctx);
    const resilient = ctx.get<ResilientStore>(RATE_LIMIT_STORE);
    return { keyPrefix, logger, service: ctx.get(RateLimitService), store: resilient.primary as RedisStore };
  }

  /** The port of the master owning `slot`, as the node at `askPort` sees it. */
  async function ownerOf(slot: number, askPort = redis.ports[0]): Promise<number> {
    const ranges = (await admin.get(askPort)!.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`Slot ${slot} is not served, as 127.0.0.1:${askPort} sees it`);
    return Number(range[2][1]);
  }
  /** Waits (bounded) until every master says `port` owns `slot`. */
  async function waitAgreement(slot: number, port: number): Promise<void> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const owners = await Promise.all(redis.ports.map((p) => ownerOf(slot, p)));
      if (owners.every((o) => o === port)) return;
      if (Date.now() > deadline) throw new Error(`Masters disagree on the owner of slot ${slot}: ${JSON.stringify(owners)} (expected ${port})`);
      await sleep(20);
    }
  }
  /**
   * The manual resharding steps of the Redis Cluster tutorial for one slot: IMPORTING on the target, MIGRATING on
   * the source, MIGRATE its keys, then SETSLOT NODE on the target, the source and the other masters. `holdMs`
   * keeps the slot open before and after moving the keys, as a slot with many keys would.
   */
  async function migrateSlot(slot: number, to: number, holdMs: number): Promise<void> {
    const from = await ownerOf(slot);
    await admin.get(to)!.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', ids.get(from)!);
    await admin.get(from)!.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', ids.get(to)!);
    await sleep(holdMs);
    for (;;) {
      const keys = (await admin.get(from)!.call('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
      if (keys.length === 0) break;
      await admin.get(from)!.call('MIGRATE', '127.0.0.1', to, '', 0, 5_000, 'KEYS', ...keys);
    }
    await sleep(holdMs);
    for (const port of [to, from, ...redis.ports.filter((p) => p !== to && p !== from)]) {
      await admin.get(port)!.call('CLUSTER', 'SETSLOT', slot, 'NODE', ids.get(to)!);
    }
    await waitAgreement(slot, to);
  }
  /** `redis-cli --cluster reshard`, non-interactive: the `count` lowest slots of `from` go to `to`. */
  function reshard(from: number, to: number, count: number): Promise<string> {
    const args = ['--cluster', 'reshard', `127.0.0.1:${redis.ports[0]}`, '--cluster-from', ids.get(from)!, '--cluster-to', ids.get(to)!];
    args.push('--cluster-slots', String(count), '--cluster-yes');
    return new Promise((resolve, reject) => {
      const child = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`redis-cli --cluster reshard exited with ${code}:\n${output.slice(-2000)}`))));
    });
  }
  /** TRYAGAIN, ASK and MOVED replies the masters sent since the last CONFIG RESETSTAT. */
  async function redirections(): Promise<Record<'TRYAGAIN' | 'ASK' | 'MOVED', number>> {
    const total = { TRYAGAIN: 0, ASK: 0, MOVED: 0 };
    for (const node of admin.values()) {
      const info = await node.info('errorstats');
      for (const kind of Object.keys(total) as (keyof typeof total)[]) total[kind] += Number(new RegExp(`errorstat_${kind}:count=(\\d+)`).exec(info)?.[1] ?? 0);
    }
    return total;
  }
  const resetStats = () => Promise.all([...admin.values()].map((n) => n.config('RESETSTAT')));
  /** A tracker whose state key lands on a slot `accept` likes. */
  function trackerOnSlot(prefix: string, rule: RateLimitRule, accept: (slot: number) => boolean): { tracker: string; slot: number } {
    for (let n = 0; ; n++) {
      const slot = calculateSlot(ruleKeys(prefix, rule, `t${n}`).state);
      if (accept(slot)) return { tracker: `t${n}`, slot };
    }
  }

  it('admits exactly the limit, with no error, while the slot moves around all three masters (SETSLOT and MIGRATE)', async () => {
    const { keyPrefix, store } = await startModule();
    // A token bucket refilling one token an hour: LIMIT admissions exactly within the test (a sliding log of this
    // limit is refused since sliding-log limits are capped at MAX_SLIDING_LOG_LIMIT).
    const rule = defineRule({ algorithm: 'token-bucket', limit: LIMIT, window: '1h', refill: 1 }, 'moving');
    const { tracker, slot } = trackerOnSlot(keyPrefix, rule, () => true);
    const home = await ownerOf(slot);
    await resetStats();

    const traffic = new Traffic(() => store.consume(tracker, rule));
    await traffic.until(() => traffic.admitted > 200, 10_000, 'traffic to start');
    const others = redis.ports.filter((p) => p !== home);
    for (const to of [others[0], others[1], home]) {
      await migrateSlot(slot, to, 5);
      await sleep(100); // calls still retrying from one move must not run into the next
    }
    const admittedWhenMoved = traffic.admitted;
    await traffic.until(() => traffic.refused >= 200 || traffic.errorCount > 0, 30_000, 'the limit to run out');
    await traffic.stop();

    expect(admittedWhenMoved).toBeLessThan(LIMIT); // the key was under live traffic during every move
    expect(traffic.summary()).toEqual({ admitted: LIMIT, refused: traffic.refused, degraded: 0, errors: {} });
    const seen = await redirections();
    expect(seen.TRYAGAIN + seen.ASK).toBeGreaterThan(0); // calls did run into the open slot, and were retried
    expect(await store.peek(tracker, rule, 0)).toMatchObject({ remaining: 0 });
  });

  it('admits exactly the limit through a node-redis 6 createCluster client passed as store while the slot moves around all three masters; a call met by TRYAGAIN, which node-redis does not retry, ran nowhere', async () => {
    let opened: OpenClient | undefined;
    try {
      opened = await openClusterClient('node-redis 6', redis.nodes);
      const { keyPrefix, store } = await startModule({ store: opened.client });
      const rule = defineRule({ algorithm: 'token-bucket', limit: LIMIT, window: '1h', refill: 1 }, 'moving');
      const { tracker, slot } = trackerOnSlot(keyPrefix, rule, () => true);
      const home = await ownerOf(slot);
      await resetStats();

      const traffic = new Traffic(() => store.consume(tracker, rule));
      await traffic.until(() => traffic.admitted > 200, 10_000, 'traffic to start');
      const others = redis.ports.filter((p) => p !== home);
      for (const to of [others[0], others[1], home]) {
        await migrateSlot(slot, to, 5);
        await sleep(100);
      }
      const admittedWhenMoved = traffic.admitted;
      await traffic.until(() => traffic.refused >= 200, 30_000, 'the limit to run out');
      await traffic.stop();

      expect(admittedWhenMoved).toBeLessThan(LIMIT);
      expect(traffic.admitted).toBe(LIMIT);
      expect(traffic.degraded).toBe(0);
      for (const message of traffic.errors.keys()) expect(message).toMatch(/^TRYAGAIN/);
      const seen = await redirections();
      expect(seen.TRYAGAIN + seen.ASK + seen.MOVED).toBeGreaterThan(0);
      expect(await store.peek(tracker, rule, 0)).toMatchObject({ remaining: 0 });
    } finally {
      await Promise.all(contexts.splice(0).map((c) => c.close()));
      await opened?.close();
    }
  });

  it('admits exactly the limit, with no error, through two `redis-cli --cluster reshard` runs of a slot range holding the key', async () => {
    const { keyPrefix, store } = await startModule();
    const rule = defineRule({ algorithm: 'sliding-window', limit: LIMIT, window: '1h' }, 'resharded');
    // Slots 0-19 are the lowest: the 20 slots any of their owners gives up first.
    const { tracker, slot } = trackerOnSlot(keyPrefix, rule, (s) => s < 20);
    const a = await ownerOf(slot);
    const [first, second] = redis.ports.filter((p) => p !== a);
    await resetStats();

    const traffic = new Traffic(() => store.consume(tracker, rule));
    await traffic.until(() => traffic.admitted > 200, 10_000, 'traffic to start');
    await reshard(a, first, 20);
    await waitAgreement(slot, first);
    await reshard(first, second, 20);
    await waitAgreement(slot, second);
    const admittedWhenMoved = traffic.admitted;
    await traffic.until(() => traffic.refused >= 200 || traffic.errorCount > 0, 30_000, 'the limit to run out');
    await traffic.stop();

    expect(await ownerOf(slot)).toBe(second);
    expect(admittedWhenMoved).toBeLessThan(LIMIT);
    expect(traffic.summary()).toEqual({ admitted: LIMIT, refused: traffic.refused, degraded: 0, errors: {} });
    const seen = await redirections();
    expect(seen.TRYAGAIN + seen.ASK + seen.MOVED).toBeGreaterThan(0); // the calls followed the slot
    expect(await store.peek(tracker, rule, 0)).toMatchObject({ remaining: 0 });
  });

  it('leaves calls that outlast ioredis\'s redirection budget (a slot held open 500 ms) to the failure policy, and counts none of them', async () => {
    const { keyPrefix, logger, service } = await startModule({ failurePolicy: 'closed', circuitBreaker: { failureThreshold: 3, minOpenMs: 50, maxOpenMs: 200 } });
    // With a lockout a call names two keys, so while the slot is split Redis answers TRYAGAIN (a one-key call would
    // follow ASK and be decided), until ioredis's redirection budget runs out.
    const rule = defineRule({ algorithm: 'fixed-window', limit: LIMIT, window: '1h', blockMs: '1h' }, 'held');
    const { tracker, slot } = trackerOnSlot(keyPrefix, rule, () => true);
    const home = await ownerOf(slot);

    const traffic = new Traffic(() => service.consume(tracker, rule));
    await traffic.until(() => traffic.admitted > 200, 10_000, 'traffic to start');
    await migrateSlot(slot, redis.ports.find((p) => p !== home)!, 500);
    const degradedWhenMoved = traffic.degraded;
    await traffic.until(() => traffic.refused >= 200 || traffic.errorCount > 0, 30_000, 'the limit to run out');
    await traffic.stop();

    expect(traffic.errorCount).toBe(0); // the failure policy decided; nothing surfaced to the callers
    expect(degradedWhenMoved).toBeGreaterThan(0);
    // The failures were reported to the app's logger (a capturing one here: the test expects them).
    expect(logger.errors).toContainEqual(expect.stringContaining('Rate-limit store failed (consume): Too many Cluster redirections'));
    // Then the store decided again, and counted exactly the admissions its callers saw: a failed call ran nowhere.
    expect(traffic.admitted).toBe(LIMIT);
    expect(traffic.refused).toBeGreaterThanOrEqual(200);
    expect(await service.peek(tracker, rule, 0)).toMatchObject({ remaining: 0 });
  });
});
