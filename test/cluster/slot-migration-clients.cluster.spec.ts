/**
 * The slot moves of slot-migration.cluster.spec.ts through a Cluster client of each other library, passed as
 * `store` as openClusterClient opens it: node-redis 5 and 6 `createCluster`, iovalkey `Cluster`, GLIDE
 * `GlideClusterClient`. Traffic on one key while its slot moves around the three masters of a real Redis Cluster
 * (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE); then what Redis counted for the key is exactly what the
 * callers were told was admitted. A token bucket that refills one token an hour, on a fixed clock: its count is
 * `limit - remaining`, so the traffic can stop after the moves instead of running the limit out.
 */
import { defineRule } from '../../lib/index.js';
import { CLIENT_LIBRARIES, openClusterClient, quietGlideLogs, type ClientLibrary, type OpenClient } from '../support/redis-clients.js';
import { sleep, Traffic, trackerOnSlot, useSlotMoves } from './support/slot-moves.js';

/** Calls made at once while a slot is held open. */
const AT_ONCE = 32;
/** How long the slot is held open with the calls in flight, in ms: well within the adapters' resends (about 300 ms of pauses). */
const HELD_OPEN_MS = 50;

/** Never reached within the test: every call Redis decides is admitted, and the count is `LIMIT - remaining`. */
const LIMIT = 500_000;

/**
 * What each library meets while the slot moves, beside ASK and MOVED (which each follows): node-redis does not
 * retry TRYAGAIN (a call of two keys while the slot is split between two masters), and GLIDE fails a lone command
 * with a MOVED back to the slot's old owner while the slot is open, and waits out a backoff of over a second on
 * TRYAGAIN. Their adapters resend such a call (it ran nowhere), paced and bounded; iovalkey retries TRYAGAIN itself.
 */
/** A call of one key (the state: ASK and MOVED while the slot moves), and of two (state and lockout: TRYAGAIN too). */
const RULES = [
  ['one key', defineRule({ algorithm: 'token-bucket', limit: LIMIT, window: '1h', refill: 1 }, 'moving')],
  ['two keys', defineRule({ algorithm: 'token-bucket', limit: LIMIT, window: '1h', refill: 1, blockMs: '1h' }, 'moving-locked')],
] as const;

const cluster = useSlotMoves();

describe.each<ClientLibrary>(CLIENT_LIBRARIES)('decisions on a key while its slot migrates, through a %s Cluster client passed as store', (library) => {
  let opened: OpenClient;
  beforeAll(async () => {
    if (library === 'GLIDE') quietGlideLogs(); // it logs each redirection it follows
    opened = await openClusterClient(library, cluster().redis.nodes);
  });
  afterAll(() => opened?.close());

  it.each(RULES)(
    'counts in Redis exactly the calls of %s it admitted while the slot moves around all three masters, giving up on none',
    async (keys, rule) => {
      const { keyPrefix, store } = await cluster().startModule({ store: opened.client });
      const { tracker, slot } = trackerOnSlot(keyPrefix, rule, () => true);
      const home = await cluster().ownerOf(slot);
      await cluster().resetStats();

      const traffic = new Traffic(() => store.consume(tracker, rule));
      await traffic.until(() => traffic.admitted > 200, 10_000, 'traffic to start');
      const others = cluster().redis.ports.filter((p) => p !== home);
      for (const to of [others[0], others[1], home]) {
        await cluster().migrateSlot(slot, to, 5);
        await sleep(100); // calls still retrying from one move must not run into the next
      }
      await traffic.stop();

      const { remaining } = await store.peek(tracker, rule, 0);
      expect(traffic.summary()).toEqual({ admitted: LIMIT - remaining, refused: 0, degraded: 0, errors: {} });
      const seen = await cluster().redirections();
      expect(seen.TRYAGAIN + seen.ASK + seen.MOVED).toBeGreaterThan(0); // the calls did meet the moving slot
      if (keys === 'two keys') expect(seen.TRYAGAIN).toBeGreaterThan(0); // and were refused while it was split
    },
  );

  it.each(RULES)(
    `decides ${AT_ONCE} calls of %s made at once while the slot is held open with its keys on the new owner, each counted once`,
    async (keys, rule) => {
      const { keyPrefix, store } = await cluster().startModule({ store: opened.client });
      const { tracker, slot } = trackerOnSlot(keyPrefix, rule, () => true);
      await store.consume(tracker, rule); // the state key, which MIGRATE moves (a lockout key there is none)
      const home = await cluster().ownerOf(slot);
      const to = cluster().redis.ports.find((p) => p !== home)!;
      await cluster().resetStats();

      await cluster().openSlot(slot, to);
      const outcomes = Promise.all(
        Array.from({ length: AT_ONCE }, () =>
          store.consume(tracker, rule).then(
            (d) => (d.allowed ? 'admitted' : 'refused'),
            (error: Error) => error.message,
          ),
        ),
      );
      await sleep(HELD_OPEN_MS);
      await cluster().closeSlot(slot, to);

      const tally = (await outcomes).reduce<Record<string, number>>((t, o) => ({ ...t, [o]: (t[o] ?? 0) + 1 }), {});
      expect(tally).toEqual({ admitted: AT_ONCE });
      const { remaining } = await store.peek(tracker, rule, 0);
      expect(LIMIT - remaining).toBe(1 + AT_ONCE);
      const seen = await cluster().redirections();
      // One key: the old owner sends each call on with ASK. Two keys: the new owner has one, so it answers TRYAGAIN.
      expect(keys === 'one key' ? seen.ASK : seen.TRYAGAIN).toBeGreaterThan(0);
    },
  );
});
