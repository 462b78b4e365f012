import type { AlgorithmDefinition } from './algorithm.interface.js';
import { slidingLogMemory } from './sliding-log.memory.js';

/** Exact sliding window on a sorted set; memory O(limit) per key. Lua: lua/sliding-log.lua; memory twin: sliding-log.memory.ts. */
export const slidingLog: AlgorithmDefinition = {
  name: 'sliding-log',
  tag: 'sl',
  // Timestamps read correctly under any window and limit.
  stateTag: () => 'sl',
  script: 'sliding-log',
  param: () => 0,
  capacity: (rule) => rule.limit,
  memory: slidingLogMemory as AlgorithmDefinition['memory'],
};
