import type { AlgorithmDefinition } from './algorithm.interface.js';
import { intervalTag } from './exact-instant.js';
import { gcraMemory } from './gcra.memory.js';

/** GCRA with redis-cell's CL.THROTTLE semantics; one integer (the TAT) per key. Lua: lua/gcra.lua; memory twin: gcra.memory.ts. */
export const gcra: AlgorithmDefinition = {
  name: 'gcra',
  tag: 'gcra',
  // The TAT counts time in emission intervals (period / limit); a lowered burst is clamped on read. `gc`, not
  // `gcra`: 2 bytes fewer in every key's name (see durationTag on why they count).
  stateTag: (rule) => `gc${intervalTag(rule.windowMs * 1000, rule.limit)}`,
  script: 'gcra',
  param: (rule) => rule.burst,
  capacity: (rule) => rule.burst,
  memory: gcraMemory as AlgorithmDefinition['memory'],
};
