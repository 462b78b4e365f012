/** How long a resend waits after a TRYAGAIN, and before every resend after the first, in ms. */
export const SLOT_MOVE_PAUSE_MS = 10;
/** At most this many resends of one call: about 300 ms of pauses in all, as the module's ioredis Cluster allows (16 TRYAGAINs 20 ms apart). */
export const SLOT_MOVE_MAX_RESENDS = 30;

/**
 * A Cluster node's refusal of a command it did not run because its slot is moving: TRYAGAIN (the keys of a
 * multi-key command are split between the two nodes), MOVED or ASK (a redirection the client did not follow), in
 * node-redis's wording (the server's reply) or GLIDE's ("... - TryAgain: ..."). Never a timeout or a lost
 * connection: those may have run.
 */
const RAN_NOWHERE = /^(TRYAGAIN|MOVED|ASK) | - (TryAgain|Moved|Ask): /;

/** Which slot-move refusal `error` is, or undefined when it is anything else (which may have run). */
export function slotMoveRefusal(error: unknown): 'TRYAGAIN' | 'MOVED' | 'ASK' | undefined {
  if (!(error instanceof Error)) return undefined;
  const found = RAN_NOWHERE.exec(error.message);
  if (!found) return undefined;
  return (found[1] ?? found[2]).toUpperCase() as 'TRYAGAIN' | 'MOVED' | 'ASK';
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The reply of `sent`, or, when a node refused it because its slot is moving (it ran nowhere), of `resend()`,
 * again while the refusals go on, at most SLOT_MOVE_MAX_RESENDS times: the first resend of a redirection at once,
 * after a TRYAGAIN and from the second on after SLOT_MOVE_PAUSE_MS. A call that was refused cannot have counted,
 * and the deadline each script call carries keeps a late resend from counting after its caller stopped waiting.
 * Any other error, and the last refusal, are thrown as they are.
 */
export async function resendWhileSlotMoves<T>(sent: Promise<T>, resend: () => Promise<T>, wait: (ms: number) => Promise<void> = pause): Promise<T> {
  try {
    return await sent;
  } catch (error) {
    let refused = error;
    for (let resends = 1; resends <= SLOT_MOVE_MAX_RESENDS; resends++) {
      const refusal = slotMoveRefusal(refused);
      if (refusal === undefined) throw refused;
      if (refusal === 'TRYAGAIN' || resends > 1) await wait(SLOT_MOVE_PAUSE_MS);
      try {
        return await resend();
      } catch (again) {
        refused = again;
      }
    }
    throw refused;
  }
}
