import type { Lease, LeaseHandle } from '../../interfaces/lease-store.interface.js';

/**
 * A lease as the service hands it out: renewed every `leaseMs / 2` by an unref'd timer (a request longer than
 * `leaseMs` keeps its slot; a crashed process stops renewing, and its slots free `leaseMs` later), released once.
 */
export function holdLease(handle: LeaseHandle, leaseMs: number): Lease {
  let released = false;
  let releasing: Promise<void> | undefined;
  const timer = setInterval(() => {
    handle.renew().then(
      (held) => {
        // Lost (expired while the process stalled, or its key was deleted): its slot may be someone else's now.
        if (!held) stop();
      },
      // ResilientLeaseStore reports a failed renewal; the next tick tries again.
      () => undefined,
    );
  }, Math.max(1, Math.floor(leaseMs / 2)));
  timer.unref();
  const stop = () => {
    released = true;
    clearInterval(timer);
  };
  return {
    id: handle.id,
    get released() {
      return released;
    },
    release() {
      stop();
      releasing ??= handle.release().catch(() => undefined);
      return releasing;
    },
  };
}

/** Releases every lease of a call without waiting: each release settles on its own (see `release`). */
export function releaseAll(leases: readonly Lease[]): void {
  for (const lease of leases) void lease.release();
}
