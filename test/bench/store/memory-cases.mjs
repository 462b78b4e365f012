// The memory group of the store bench: fixed window on the same path for both libraries (RLF's memory limiter is a
// fixed-window counter), all admitted and nearly all refused, at 10k and 1M keys, through the module and the bare
// MemoryStore; and the other algorithms through the module. A minimal Map-based fixed window, admitting, is the
// harness's reference (not a peer, not scored). Shared by the bench and the child process that runs
// each memory case (store/memory-child.mjs).
import { MemoryStore } from '../../../dist/index.js';
import { bareMemorySubject, minimalMemorySubject, moduleSubject, rlfMemorySubject } from './subjects.mjs';

export const ALGORITHMS = ['sliding-log', 'sliding-window', 'fixed-window', 'token-bucket', 'gcra'];
/**
 * High enough that every call of a run is admitted (FLUSHALL between runs): 10M per 60 s, under defineRule's cap
 * of 1,000 per ms of window; the sliding log's own cap is 1,000.
 */
export const ADMIT_ALL = 10_000_000;
const SLIDING_LOG_ADMIT_ALL = 1_000;
export const admitLimit = (algorithm) => (algorithm === 'sliding-log' ? SLIDING_LOG_ADMIT_ALL : ADMIT_ALL);
const MEMORY_KEYS = { '10k': 10_000, '1M': 1_000_000 };

export const memoryId = (keys, scenario, subject) => `mem-${keys}-${scenario}-${subject}`;

export function memoryCases() {
  const cases = [];
  for (const [keysLabel, keyCount] of Object.entries(MEMORY_KEYS)) {
    for (const scenario of ['admit', 'refuse']) {
      const limit = scenario === 'admit' ? ADMIT_ALL : 1;
      const common = { group: 'memory', keyCount, refuse: scenario === 'refuse' };
      const what = `${keysLabel} keys, ${scenario === 'admit' ? 'all admitted' : 'nearly all refused'}`;
      // At 1M keys and refusing, our stores get room for every key, so that they refuse as RLF does (its memory
      // limiter keeps every key): past the default maxKeys, keys evicted would be admitted afresh.
      const maxKeys = scenario === 'refuse' && keyCount > 100_000 ? 2 * keyCount : undefined;
      cases.push({
        ...common,
        id: memoryId(keysLabel, scenario, 'module'),
        label: `ours fixed-window (module, memory${maxKeys ? `, maxKeys ${maxKeys.toLocaleString('en-US')}` : ''}), ${what}`,
        make: () => moduleSubject({ store: maxKeys ? new MemoryStore({ maxKeys }) : 'memory', algorithm: 'fixed-window', limit }),
      });
      cases.push({
        ...common,
        id: memoryId(keysLabel, scenario, 'bare'),
        label: `bare MemoryStore fixed-window${maxKeys ? ` (maxKeys ${maxKeys.toLocaleString('en-US')})` : ''}, ${what}`,
        make: async () => bareMemorySubject({ algorithm: 'fixed-window', limit, maxKeys }),
      });
      cases.push({ ...common, id: memoryId(keysLabel, scenario, 'rlf'), label: `RateLimiterMemory, ${what}`, make: async () => rlfMemorySubject({ limit }) });
      if (scenario === 'admit') {
        // What the harness allows (see minimalMemorySubject): not scored, as the raw EVALSHA ceiling is not a peer.
        cases.push({ ...common, id: memoryId(keysLabel, scenario, 'minimal'), label: `reference: a minimal Map fixed window (no eviction, ms clock), ${what}`, make: async () => minimalMemorySubject({ limit }) });
      }
    }
  }
  for (const algorithm of ALGORITHMS.filter((a) => a !== 'fixed-window')) {
    cases.push({
      id: `mem-10k-admit-module-${algorithm}`,
      group: 'memory',
      keyCount: 10_000,
      label: `ours ${algorithm} (module, memory), 10k keys, all admitted`,
      make: () => moduleSubject({ store: 'memory', algorithm, limit: admitLimit(algorithm) }),
    });
  }
  return cases;
}
