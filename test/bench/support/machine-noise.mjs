// How much CPU the rest of the machine used while a case ran: the noise it competed with. On a shared box other
// builds and tests take cores from the bench's node and redis-server processes, and a ratio between two cases
// means little when one of them ran beside a compiler. Linux only (/proc); elsewhere every figure is NaN.
import { readFileSync } from 'node:fs';

/** Runs above this many cores of other work are marked noisy in the reports. */
export const NOISY_CORES = 0.3;

/** Busy jiffies (everything but idle and iowait) of the whole machine since boot, from /proc/stat. */
function machineBusyJiffies() {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const values = ticks.map(Number);
    const total = values.reduce((a, b) => a + b, 0);
    return total - values[3] - (values[4] ?? 0);
  } catch {
    return NaN;
  }
}

/** utime + stime jiffies of one process (all its threads), from /proc/<pid>/stat; NaN when it is gone. */
export function processJiffies(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (in parentheses, may hold spaces): utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return NaN;
  }
}

/** USER_HZ: the unit of both /proc files. 100 on every Linux the bench targets. */
const JIFFIES_PER_SECOND = 100;

/**
 * Starts a measurement over the bench's own processes (`pids()`: this node process, its redis-server(s), app
 * processes). `stop()` returns { othersCores, ownCores, busyCores, seconds }: the machine's busy CPU minus the
 * bench's own, the bench's own, and the machine's whole, per second of wall time, in cores. Jiffies are 10 ms, so a few seconds' run is accurate to a few hundredths.
 */
export function startNoiseMeter(pids) {
  const ids = [...new Set(pids())];
  const own = () => ids.reduce((sum, pid) => sum + processJiffies(pid), 0);
  const machineBefore = machineBusyJiffies();
  const ownBefore = own();
  const started = process.hrtime.bigint();
  return {
    stop() {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const ownJiffies = own() - ownBefore;
      const busyJiffies = machineBusyJiffies() - machineBefore;
      const othersJiffies = busyJiffies - ownJiffies;
      return {
        seconds,
        busyCores: busyJiffies / JIFFIES_PER_SECOND / seconds,
        ownCores: ownJiffies / JIFFIES_PER_SECOND / seconds,
        // Rounding of the two readings can make a quiet machine look a hair below zero.
        othersCores: Math.max(0, othersJiffies / JIFFIES_PER_SECOND / seconds),
      };
    },
  };
}

/**
 * Waits up to `maxSeconds` until the rest of the machine has used less than NOISY_CORES over a 1 s sample
 * (the bench itself is idle meanwhile, so the whole machine's busy CPU is the others'). Resolves to the seconds
 * waited; gives up quietly, and the run's own measurement then shows the noise.
 */
export async function waitForQuiet(maxSeconds) {
  const started = Date.now();
  while (Date.now() - started < maxSeconds * 1000) {
    const meter = startNoiseMeter(() => []);
    await new Promise((done) => setTimeout(done, 1000));
    if (!(meter.stop().othersCores >= NOISY_CORES)) break;
  }
  return (Date.now() - started) / 1000;
}
