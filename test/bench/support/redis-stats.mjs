// What a redis-server says it spent: its process CPU (INFO cpu) and the time it ran scripts (INFO
// commandstats), read around a measured period. Shared by the store and HTTP benches.

/** Redis's own CPU seconds (used_cpu_user + used_cpu_sys, main process and its threads), from INFO cpu. */
export async function redisCpuSeconds(admin) {
  const info = await admin.info('cpu');
  const read = (field) => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return read('used_cpu_user') + read('used_cpu_sys');
}

/** Calls and µs inside Redis of EVAL / EVALSHA / FCALL (and their _RO forms) since the last CONFIG RESETSTAT. */
export async function scriptStats(admin) {
  const info = await admin.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const match of info.matchAll(/^cmdstat_(?:eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(match[1]);
    usec += Number(match[2]);
  }
  return { calls, usec };
}

/** The redis-server's pid (INFO server), for the noise meter. */
export async function redisPid(admin) {
  const info = await admin.info('server');
  return Number(/^process_id:(\d+)/m.exec(info)?.[1]);
}

/**
 * Snapshot before a measured period, on every node given (one admin client per redis-server): resets
 * commandstats, reads CPU. `finish()` resolves to { cpuSeconds, scriptCalls, scriptUsec } summed over the nodes.
 */
export async function startRedisAccounting(admins) {
  await Promise.all(admins.map((a) => a.config('RESETSTAT')));
  const before = await Promise.all(admins.map(redisCpuSeconds));
  return {
    async finish() {
      const after = await Promise.all(admins.map(redisCpuSeconds));
      const scripts = await Promise.all(admins.map(scriptStats));
      return {
        cpuSeconds: after.reduce((sum, cpu, i) => sum + cpu - before[i], 0),
        scriptCalls: scripts.reduce((sum, s) => sum + s.calls, 0),
        scriptUsec: scripts.reduce((sum, s) => sum + s.usec, 0),
      };
    },
  };
}
