import { RedisCallBatcher, type PendingCall } from '../../lib/stores/redis/redis-call.batcher.js';

/**
 * When the batcher hands its batches to the client, counted in turns of the event loop. A client that writes from a
 * `setImmediate` of its own (node-redis) gets one batch per write on one connection, so that Redis decides a batch
 * while the app reads the replies to the one before; on a Cluster (each node its own connection) every batch at once.
 */
async function turnsHanded(writesFromImmediate: boolean, oneBatchPerWrite: boolean): Promise<{ turn: number; keys: string[] }[]> {
  const handed: { turn: number; keys: string[] }[] = [];
  let turn = 0;
  let ticking = true;
  const tick = () => {
    turn++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const batcher = new RedisCallBatcher(
    (calls: PendingCall[], landed: () => void) => {
      handed.push({ turn, keys: calls.map((c) => c.rules[0].keys.state) });
      // Answered a few turns later, as a reply read from the socket is.
      setTimeout(() => {
        landed();
        for (const call of calls) call.resolve(undefined);
      }, 5);
    },
    2,
    writesFromImmediate,
    oneBatchPerWrite,
  );
  const rule = (key: string) => ({ keys: { state: key }, definition: { tag: 'fw' }, cost: 1 }) as never;
  // 'a' goes alone (nothing in flight); 'b'-'g' close three full batches of two in the same turn.
  await Promise.all(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((key) => batcher.submit('consume', [rule(key)], true)));
  ticking = false;
  return handed;
}

describe('RedisCallBatcher: when batches closed in one turn go to the client', () => {
  it('hands a client that writes from a setImmediate of its own, on one connection, one batch per write: the first with the lone call, then one a turn', async () => {
    expect(await turnsHanded(true, true)).toEqual([
      { turn: 0, keys: ['a'] },
      { turn: 0, keys: ['b', 'c'] },
      { turn: 1, keys: ['d', 'e'] },
      { turn: 2, keys: ['f', 'g'] },
    ]);
  });

  it('hands such a client on a Cluster, where each node has its own connection, every batch in the turn it closed', async () => {
    expect((await turnsHanded(true, false)).map((h) => h.turn)).toEqual([0, 0, 0, 0]);
  });

  it('hands a client that writes at once (ioredis, iovalkey, GLIDE) every batch in the turn it closed', async () => {
    expect((await turnsHanded(false, false)).map((h) => h.turn)).toEqual([0, 0, 0, 0]);
  });
});
