import type { Clock } from '../interfaces/clock.interface.js';

/** The memory stores' default clock: ms since the epoch, which never steps back (performance.timeOrigin + performance.now()). */
export const monotonic: Clock = () => performance.timeOrigin + performance.now();
