import type { AlgorithmDefinition } from './algorithm.interface.js';
import type { WindowAlgorithm } from '../interfaces/rule.interface.js';
import { fixedWindow } from './fixed-window.algorithm.js';
import { gcra } from './gcra.algorithm.js';
import { slidingLog } from './sliding-log.algorithm.js';
import { slidingWindow } from './sliding-window.algorithm.js';
import { tokenBucket } from './token-bucket.algorithm.js';

export const ALGORITHM_DEFINITIONS: Readonly<Record<WindowAlgorithm, AlgorithmDefinition>> = {
  'sliding-log': slidingLog,
  'sliding-window': slidingWindow,
  'fixed-window': fixedWindow,
  'token-bucket': tokenBucket,
  gcra,
};
