import type { Clock } from '../interfaces/clock.interface.js';

/** The memory stores' default clock: ms since the epoch, which never steps back (performance.timeOrigin + performance.now()). */
// Read once: a getter call on every decision otherwise, and it does not change in a process.
const origin = performance.timeOrigin;
export const monotonic: Clock = () => origin + performance.now();
