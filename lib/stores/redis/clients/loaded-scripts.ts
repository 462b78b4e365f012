/**
 * The scripts an adapter has sent as EVAL, per place (a Cluster node, a slot, or '' for the one server): that
 * server has them since, so they go as EVALSHA there. A script not known there goes as EVAL at once, never as an
 * EVALSHA answered NOSCRIPT and resent: the resend would run after calls made later in the same turn (a batch of
 * another script on the same keys), and decide them out of order.
 */
export class LoadedScripts {
  private readonly byPlace = new Map<string, Set<string>>();

  /** Whether `sha` goes as EVALSHA to `place`; if not, it is taken as loaded there from now on (sent as EVAL). */
  knownOrMark(place: string, sha: string): boolean {
    let loaded = this.byPlace.get(place);
    if (loaded === undefined) this.byPlace.set(place, (loaded = new Set()));
    if (loaded.has(sha)) return true;
    loaded.add(sha);
    return false;
  }

  /** `place` answered NOSCRIPT: its server lost its scripts (a restart, a SCRIPT FLUSH, a failover). */
  forget(place: string): void {
    this.byPlace.delete(place);
  }
}
