/** The time source and timers a waiter sleeps on; tests pass ones they move by hand. */
export interface WaitTimers {
  /** Now, in ms (any origin: only differences are used). */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The process's own: a monotonic clock and Node's timers. */
export const REAL_TIMERS: WaitTimers = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
