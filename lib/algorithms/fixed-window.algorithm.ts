import type { AlgorithmDefinition } from './algorithm.interface.js';
import { durationTag } from './duration.tag.js';
import { fixedWindowMemory } from './fixed-window.memory.js';

/** Epoch-aligned fixed window counter; one integer per key. Lua: lua/fixed-window.lua; memory twin: fixed-window.memory.ts. */
export const fixedWindow: AlgorithmDefinition = {
  name: 'fixed-window',
  tag: 'fw',
  // Counts are per aligned window: another window length reads them as another window's (`fw1m`).
  stateTag: (rule) => `fw${durationTag(rule.windowMs * 1000)}`,
  script: 'fixed-window',
  param: () => 0,
  capacity: (rule) => rule.limit,
  memory: fixedWindowMemory as AlgorithmDefinition['memory'],
};
