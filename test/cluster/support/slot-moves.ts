import { spawn } from 'node:child_process';
import { Test, type TestingModule } from '@nestjs/testing';
import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import {
  RATE_LIMIT_STORE,
  RateLimitModule,
  RateLimitService,
  ruleKeys,
  type Decision,
  type RateLimitModuleOptions,
  type RateLimitRule,
  type RedisStore,
  type ResilientStore,
} from '../../../lib/index.js';
import { CapturingLogger } from '../../e2e/support/rate-limit-config.js';
import { startRedisCluster, type TestRedisCluster } from '../../support/redis-cluster.js';
import { uniquePrefix } from '../../support/redis-server.js';

export const HOOK_TIMEOUT_MS = 60_000;
const NOW = 1_700_000_000_000;
const WORKERS = 16;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Concurrent callers of one decision, counting outcomes until stopped. */
export class Traffic {
  admitted = 0;
  refused = 0;
  degraded = 0;
  readonly errors = new Map<string, number>();
  private running = true;
  /** From this many admissions on, one decision every 5 ms (see slowFrom). */
  private slowAt = Infinity;
  private readonly workers: Promise<void>[];

  constructor(decide: () => Promise<Decision>) {
    this.workers = Array.from({ length: WORKERS }, async (_, worker) => {
      while (this.running) {
        if (this.admitted >= this.slowAt) {
          await sleep(5);
          if (worker > 0) continue;
        }
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
  /**
   * From `admitted` admissions on, until fullSpeed(), one worker decides every 5 ms and the others wait: the traffic
   * stays live without running the limit out, however fast the machine decides (a test whose slot moves must all
   * meet traffic).
   */
  slowFrom(admitted: number): void {
    this.slowAt = admitted;
  }
  fullSpeed(): void {
    this.slowAt = Infinity;
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

/** A real 3-master cluster for one test file, the module on it, and the admin steps that move its slots. */
export interface SlotMoves {
  readonly redis: TestRedisCluster;
  /** The module on the cluster (by default it creates the Cluster client: `store: { cluster: nodes }`), without HTTP; closed after each test. */
  startModule(options?: RateLimitModuleOptions): Promise<{ keyPrefix: string; logger: CapturingLogger; service: RateLimitService; store: RedisStore }>;
  /** The port of the master owning `slot`, as the node at `askPort` sees it. */
  ownerOf(slot: number, askPort?: number): Promise<number>;
  /** Waits (bounded) until every master says `port` owns `slot`. */
  waitAgreement(slot: number, port: number): Promise<void>;
  /**
   * The manual resharding steps of the Redis Cluster tutorial for one slot: IMPORTING on the target, MIGRATING on
   * the source, MIGRATE its keys, then SETSLOT NODE on the target, the source and the other masters. `holdMs`
   * keeps the slot open before and after moving the keys, as a slot with many keys would.
   */
  migrateSlot(slot: number, to: number, holdMs: number): Promise<void>;
  /** The first steps of `migrateSlot`: IMPORTING, MIGRATING, MIGRATE; the slot stays open, its keys on `to`. */
  openSlot(slot: number, to: number): Promise<void>;
  /** The last step of `migrateSlot`: SETSLOT NODE on `to`, the slot's old owner and the other masters. */
  closeSlot(slot: number, to: number): Promise<void>;
  /** `redis-cli --cluster reshard`, non-interactive: the `count` lowest slots of `from` go to `to`. */
  reshard(from: number, to: number, count: number): Promise<string>;
  /** TRYAGAIN, ASK and MOVED replies the masters sent since the last `resetStats()`. */
  redirections(): Promise<Record<'TRYAGAIN' | 'ASK' | 'MOVED', number>>;
  resetStats(): Promise<unknown>;
}

/**
 * Starts the cluster before the file's tests and stops it after them; closes the modules after each test. The
 * getter's value is there once `beforeAll` has run.
 */
export function useSlotMoves(): () => SlotMoves {
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

  const markOpen = async (slot: number, from: number, to: number) => {
    await admin.get(to)!.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', ids.get(from)!);
    await admin.get(from)!.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', ids.get(to)!);
  };
  const moveKeys = async (slot: number, from: number, to: number) => {
    for (;;) {
      const keys = (await admin.get(from)!.call('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
      if (keys.length === 0) return;
      await admin.get(from)!.call('MIGRATE', '127.0.0.1', to, '', 0, 5_000, 'KEYS', ...keys);
    }
  };
  const assign = async (slot: number, from: number, to: number) => {
    for (const port of [to, from, ...redis.ports.filter((p) => p !== to && p !== from)]) {
      await admin.get(port)!.call('CLUSTER', 'SETSLOT', slot, 'NODE', ids.get(to)!);
    }
    await moves.waitAgreement(slot, to);
  };
  const moves: SlotMoves = {
    get redis() {
      return redis;
    },
    async startModule(options = {}) {
      const keyPrefix = uniquePrefix();
      const logger = new CapturingLogger();
      const ctx = await Test.createTestingModule({
        imports: [RateLimitModule.forRoot({ store: { cluster: redis.nodes }, keyPrefix, clock: () => NOW, timeoutMs: 2_000, ...options })],
      })
        .setLogger(logger) // the failures a test provokes are expected: kept, not printed
        .compile();
      await ctx.init(); // connects the Cluster
      contexts.push(ctx);
      const resilient = ctx.get<ResilientStore>(RATE_LIMIT_STORE);
      return { keyPrefix, logger, service: ctx.get(RateLimitService), store: resilient.primary as RedisStore };
    },
    async ownerOf(slot, askPort = redis.ports[0]) {
      const ranges = (await admin.get(askPort)!.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      if (!range) throw new Error(`Slot ${slot} is not served, as 127.0.0.1:${askPort} sees it`);
      return Number(range[2][1]);
    },
    async waitAgreement(slot, port) {
      const deadline = Date.now() + 5_000;
      for (;;) {
        const owners = await Promise.all(redis.ports.map((p) => moves.ownerOf(slot, p)));
        if (owners.every((o) => o === port)) return;
        if (Date.now() > deadline) throw new Error(`Masters disagree on the owner of slot ${slot}: ${JSON.stringify(owners)} (expected ${port})`);
        await sleep(20);
      }
    },
    async migrateSlot(slot, to, holdMs) {
      const from = await moves.ownerOf(slot);
      await markOpen(slot, from, to);
      await sleep(holdMs);
      await moveKeys(slot, from, to);
      await sleep(holdMs);
      await assign(slot, from, to);
    },
    async openSlot(slot, to) {
      const from = await moves.ownerOf(slot);
      await markOpen(slot, from, to);
      await moveKeys(slot, from, to);
    },
    async closeSlot(slot, to) {
      await assign(slot, await moves.ownerOf(slot), to);
    },
    reshard(from, to, count) {
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
    },
    async redirections() {
      const total = { TRYAGAIN: 0, ASK: 0, MOVED: 0 };
      for (const node of admin.values()) {
        const info = await node.info('errorstats');
        for (const kind of Object.keys(total) as (keyof typeof total)[]) total[kind] += Number(new RegExp(`errorstat_${kind}:count=(\\d+)`).exec(info)?.[1] ?? 0);
      }
      return total;
    },
    resetStats: () => Promise.all([...admin.values()].map((n) => n.config('RESETSTAT'))),
  };
  return () => moves;
}

/** A tracker whose state key lands on a slot `accept` likes. */
export function trackerOnSlot(prefix: string, rule: RateLimitRule, accept: (slot: number) => boolean): { tracker: string; slot: number } {
  for (let n = 0; ; n++) {
    const slot = calculateSlot(ruleKeys(prefix, rule, `t${n}`).state);
    if (accept(slot)) return { tracker: `t${n}`, slot };
  }
}
