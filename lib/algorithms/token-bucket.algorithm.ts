import type { AlgorithmDefinition } from './algorithm.interface.js';
import { intervalTag } from './exact-instant.js';
import { tokenBucketMemory } from './token-bucket.memory.js';

/** Token bucket of `limit` tokens refilled at `refill` per window; one integer per key. Lua: lua/token-bucket.lua; memory twin: token-bucket.memory.ts. */
export const tokenBucket: AlgorithmDefinition = {
  name: 'token-bucket',
  tag: 'tb',
  // The stored instant counts time in intervals (window / refill); a lowered capacity is clamped on read.
  stateTag: (rule) => `tb${intervalTag(rule.windowMs * 1000, rule.refill)}`,
  script: 'token-bucket',
  param: (rule) => rule.refill,
  capacity: (rule) => rule.limit,
  memory: tokenBucketMemory as AlgorithmDefinition['memory'],
};
