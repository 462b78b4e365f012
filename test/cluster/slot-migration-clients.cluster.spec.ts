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

/** Never reached within the test: every call Redis decides is admitted, and the count is `LIMIT - remaining`. */
const LIMIT = 500_000;

/**
 * The calls each library gives up on while a slot moves (it follows the others to the slot's new owner), by the
 * error its caller gets; each ran nowhere, as the count shows. node-redis does not retry TRYAGAIN (a call of two
 * keys while the slot is split between two masters). GLIDE 2.5 fails some calls made while the slot is open
 * (MIGRATING on its owner, IMPORTING on the next) with a MOVED naming the slot's old owner, with and without an
 * explicit route (measured with raw EVALs too: not the adapter's doing); iovalkey follows ASK and retries TRYAGAIN.
 */
const GIVES_UP: Record<ClientLibrary, { on: RegExp; what: string } | undefined> = {
  'node-redis 5': { on: /^TRYAGAIN /, what: 'TRYAGAIN, which node-redis does not retry' },
  'node-redis 6': { on: /^TRYAGAIN /, what: 'TRYAGAIN, which node-redis does not retry' },
  iovalkey: undefined,
  GLIDE: { on: / - Moved: /, what: 'a MOVED to the old owner while the slot is open' },
};

/** A call of one key (the state: ASK and MOVED while the slot moves), and of two (state and lockout: TRYAGAIN too). */
const RULES = [
  ['one key', defineRule({ algorithm: 'token-bucket', limit: LIMIT, window: '1h', refill: 1 }, 'moving')],
  ['two keys', defineRule({ algorithm: 'token-bucket', limit: LIMIT, window: '1h', refill: 1, blockMs: '1h' }, 'moving-locked')],
] as const;

const cluster = useSlotMoves();

describe.each<ClientLibrary>(CLIENT_LIBRARIES)('decisions on a key while its slot migrates, through a %s Cluster client passed as store', (library) => {
  let opened: OpenClient;
  beforeAll(async () => {
    if (library === 'GLIDE') quietGlideLogs(); // it logs each redirection it follows, and each it gives up on
    opened = await openClusterClient(library, cluster().redis.nodes);
  });
  afterAll(() => opened?.close());

  const givesUp = GIVES_UP[library];
  it.each(RULES)(
    `counts in Redis exactly the calls of %s it admitted while the slot moves around all three masters${givesUp ? `, and none it gave up on (${givesUp.what})` : ', giving up on none'}`,
    async (_keys, rule) => {
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
      expect({ counted: LIMIT - remaining, refused: traffic.refused, degraded: traffic.degraded }).toEqual({ counted: traffic.admitted, refused: 0, degraded: 0 });
      const unexpected = [...traffic.errors.keys()].filter((message) => !givesUp?.on.test(message));
      expect(unexpected).toEqual([]);
      const seen = await cluster().redirections();
      expect(seen.TRYAGAIN + seen.ASK + seen.MOVED).toBeGreaterThan(0); // the calls did meet the moving slot
    },
  );
});
