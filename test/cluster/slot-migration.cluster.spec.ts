/**
 * Traffic on one key while its hash slot moves between the masters of a real Redis Cluster, through the module's
 * own Cluster client (`store: { cluster: nodes }`: no offline queue, no retries or resends of commands in flight,
 * TRYAGAIN retried every 20 ms); the other libraries' Cluster clients are in slot-migration-clients.cluster.spec.ts.
 * The scripts touch two keys (state and lockout) of one slot, so while the slot is open (MIGRATING/IMPORTING) Redis
 * answers them TRYAGAIN or ASK, and ioredis retries within its redirection budget (maxRedirections 16). A fixed
 * clock: only atomicity and counting are tested. The file moves slots around: with REDIS_CLUSTER_NODES, those of
 * that cluster.
 */
import { defineRule } from '../../lib/index.js';
import { sleep, Traffic, trackerOnSlot, useSlotMoves } from './support/slot-moves.js';

/**
 * Small enough to run out soon after the moves. The traffic slows to one decision every 5 ms once RESERVE admissions
 * are left, until the moves are done, so that it outlasts them however fast the machine decides (on a fast day,
 * 20,000 were admitted before the third move had ended).
 */
const LIMIT = 20_000;
const RESERVE = 5_000;

describe('decisions on a key while its slot migrates between the masters of a real Redis Cluster', () => {
  const cluster = useSlotMoves();

  it('admits exactly the limit, with no error, while the slot moves around all three masters (SETSLOT and MIGRATE)', async () => {
    const { keyPrefix, store } = await cluster().startModule();
    // A token bucket refilling one token an hour: LIMIT admissions exactly within the test (a sliding log of this
    // limit is refused since sliding-log limits are capped at MAX_SLIDING_LOG_LIMIT).
    const rule = defineRule({ algorithm: 'token-bucket', limit: LIMIT, window: '1h', refill: 1 }, 'moving');
    const { tracker, slot } = trackerOnSlot(keyPrefix, rule, () => true);
    const home = await cluster().ownerOf(slot);
    await cluster().resetStats();

    const traffic = new Traffic(() => store.consume(tracker, rule));
    traffic.slowFrom(LIMIT - RESERVE);
    await traffic.until(() => traffic.admitted > 200, 10_000, 'traffic to start');
    const others = cluster().redis.ports.filter((p) => p !== home);
    for (const to of [others[0], others[1], home]) {
      await cluster().migrateSlot(slot, to, 5);
      await sleep(100); // calls still retrying from one move must not run into the next
    }
    const admittedWhenMoved = traffic.admitted;
    traffic.fullSpeed();
    await traffic.until(() => traffic.refused >= 200 || traffic.errorCount > 0, 30_000, 'the limit to run out');
    await traffic.stop();

    expect(admittedWhenMoved).toBeLessThan(LIMIT); // the key was under live traffic during every move
    expect(traffic.summary()).toEqual({ admitted: LIMIT, refused: traffic.refused, degraded: 0, errors: {} });
    const seen = await cluster().redirections();
    expect(seen.TRYAGAIN + seen.ASK).toBeGreaterThan(0); // calls did run into the open slot, and were retried
    expect(await store.peek(tracker, rule, 0)).toMatchObject({ remaining: 0 });
  });

  it('admits exactly the limit, with no error, through two `redis-cli --cluster reshard` runs of a slot range holding the key', async () => {
    const { keyPrefix, store } = await cluster().startModule();
    const rule = defineRule({ algorithm: 'sliding-window', limit: LIMIT, window: '1h' }, 'resharded');
    // Slots 0-19 are the lowest: the 20 slots any of their owners gives up first.
    const { tracker, slot } = trackerOnSlot(keyPrefix, rule, (s) => s < 20);
    const a = await cluster().ownerOf(slot);
    const [first, second] = cluster().redis.ports.filter((p) => p !== a);
    await cluster().resetStats();

    const traffic = new Traffic(() => store.consume(tracker, rule));
    traffic.slowFrom(LIMIT - RESERVE);
    await traffic.until(() => traffic.admitted > 200, 10_000, 'traffic to start');
    await cluster().reshard(a, first, 20);
    await cluster().waitAgreement(slot, first);
    await cluster().reshard(first, second, 20);
    await cluster().waitAgreement(slot, second);
    const admittedWhenMoved = traffic.admitted;
    traffic.fullSpeed();
    await traffic.until(() => traffic.refused >= 200 || traffic.errorCount > 0, 30_000, 'the limit to run out');
    await traffic.stop();

    expect(await cluster().ownerOf(slot)).toBe(second);
    expect(admittedWhenMoved).toBeLessThan(LIMIT);
    expect(traffic.summary()).toEqual({ admitted: LIMIT, refused: traffic.refused, degraded: 0, errors: {} });
    const seen = await cluster().redirections();
    expect(seen.TRYAGAIN + seen.ASK + seen.MOVED).toBeGreaterThan(0); // the calls followed the slot
    expect(await store.peek(tracker, rule, 0)).toMatchObject({ remaining: 0 });
  });

  it('leaves calls that outlast ioredis\'s redirection budget (a slot held open 500 ms) to the failure policy, and counts none of them', async () => {
    const { keyPrefix, logger, service } = await cluster().startModule({ failurePolicy: 'closed', circuitBreaker: { failureThreshold: 3, minOpenMs: 50, maxOpenMs: 200 } });
    // With a lockout a call names two keys, so while the slot is split Redis answers TRYAGAIN (a one-key call would
    // follow ASK and be decided), until ioredis's redirection budget runs out.
    const rule = defineRule({ algorithm: 'fixed-window', limit: LIMIT, window: '1h', blockMs: '1h' }, 'held');
    const { tracker, slot } = trackerOnSlot(keyPrefix, rule, () => true);
    const home = await cluster().ownerOf(slot);

    const traffic = new Traffic(() => service.consume(tracker, rule));
    await traffic.until(() => traffic.admitted > 200, 10_000, 'traffic to start');
    await cluster().migrateSlot(slot, cluster().redis.ports.find((p) => p !== home)!, 500);
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
