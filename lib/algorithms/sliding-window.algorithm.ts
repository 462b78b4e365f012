import type { AlgorithmDefinition } from './algorithm.interface.js';
import { slidingWindowMemory } from './sliding-window.memory.js';

/** Sliding window of `segments` counted cells; memory O(segments) per key. Lua: lua/sliding-window.lua; memory twin: sliding-window.memory.ts. */
export const slidingWindow: AlgorithmDefinition = {
  name: 'sliding-window',
  tag: 'sw',
  // Cells are numbered absolutely, so a new window with the same cell length reads them correctly; another cell
  // length would misplace them.
  stateTag: (rule) => `sw${rule.windowMs / rule.segments}`,
  script: 'sliding-window',
  param: (rule) => rule.segments,
  capacity: (rule) => rule.limit,
  memory: slidingWindowMemory as AlgorithmDefinition['memory'],
};
