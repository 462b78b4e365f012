import { readFileSync } from 'node:fs';

/**
 * How long this process's main thread (its event loop: the app and the test's HTTP client alike) has waited for a
 * CPU, in ms: Linux's run delay, the second field of /proc/self/schedstat (ns). On a loaded machine every timer and
 * every reply runs that much later than asked, whatever the code under test does; a latency bound leaves it out
 * (`ms - cpuWaitMs` over the same interval), so that it bounds what the code can promise, not how busy the machine
 * was. 0 where the kernel does not report it (not Linux): the bound is then on wall time.
 */
export function cpuWaitMs(): number {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]) / 1e6 || 0;
  } catch {
    return 0;
  }
}
