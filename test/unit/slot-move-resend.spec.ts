import { resendWhileSlotMoves, slotMoveRefusal, SLOT_MOVE_MAX_RESENDS, SLOT_MOVE_PAUSE_MS } from '../../lib/stores/redis/clients/slot-move.resend.js';

/** The errors as each client words them: node-redis gives the server's reply, GLIDE its own prefix. */
const REFUSALS = {
  'node-redis TRYAGAIN': 'TRYAGAIN Multiple keys request during rehashing of slot',
  'node-redis MOVED': 'MOVED 13006 127.0.0.1:7001',
  'node-redis ASK': 'ASK 13006 127.0.0.1:7002',
  'GLIDE TryAgain': 'An error was signalled by the server: - TryAgain: Multiple keys request during rehashing of slot',
  'GLIDE Moved': 'An error was signalled by the server: - Moved: 13006 127.0.0.1:7001',
  'GLIDE Ask': 'An error was signalled by the server: - Ask: 13006 127.0.0.1:7002',
};

/** Errors of calls that may have run (or are not about a moving slot): never resent. */
const MAY_HAVE_RUN = [
  'Request timed out', // GLIDE's TimeoutError
  'Socket closed unexpectedly', // node-redis
  'The client is closed',
  'Connection is closed.',
  'An error was signalled by the server: - NoScriptError: No matching script. Please use EVAL.',
  'CLUSTERDOWN The cluster is down',
  'ERR Error running script (call to f_0123): @user_script:1: MOVED is not a command', // a script's own error naming one
];

/** `resendWhileSlotMoves` over replies given in order (an Error is thrown, anything else returned), recording each send and pause. */
async function run(replies: unknown[]) {
  const log: string[] = [];
  let sends = 0;
  const send = async () => {
    const reply = replies[Math.min(sends++, replies.length - 1)];
    log.push(reply instanceof Error ? `refused: ${reply.message}` : `reply: ${String(reply)}`);
    if (reply instanceof Error) throw reply;
    return reply;
  };
  const wait = async (ms: number) => void log.push(`pause ${ms} ms`);
  const outcome = await resendWhileSlotMoves(send(), send, wait).then(
    (value) => `reply: ${String(value)}`,
    (error: Error) => `thrown: ${error.message}`,
  );
  return { outcome, log, sends };
}

describe('slotMoveRefusal', () => {
  it.each(Object.entries(REFUSALS))('knows %s as a refusal of a call that ran nowhere', (_name, message) => {
    expect(slotMoveRefusal(new Error(message))).toBe(/TRYAGAIN|TryAgain/.test(message) ? 'TRYAGAIN' : /MOVED|Moved/.test(message) ? 'MOVED' : 'ASK');
  });

  it.each(MAY_HAVE_RUN)('does not take "%s" for one', (message) => {
    expect(slotMoveRefusal(new Error(message))).toBeUndefined();
  });

  it('does not take a value that is not an Error for one', () => {
    expect(slotMoveRefusal('TRYAGAIN Multiple keys request during rehashing of slot')).toBeUndefined();
  });
});

describe('resendWhileSlotMoves', () => {
  it('returns the reply of a call that was not refused, sending it once', async () => {
    expect(await run([7])).toEqual({ outcome: 'reply: 7', log: ['reply: 7'], sends: 1 });
  });

  it('resends a call refused with TRYAGAIN after a pause, until it is decided', async () => {
    const tryAgain = new Error(REFUSALS['node-redis TRYAGAIN']);
    expect(await run([tryAgain, tryAgain, 'decided'])).toEqual({
      outcome: 'reply: decided',
      log: [`refused: ${tryAgain.message}`, `pause ${SLOT_MOVE_PAUSE_MS} ms`, `refused: ${tryAgain.message}`, `pause ${SLOT_MOVE_PAUSE_MS} ms`, 'reply: decided'],
      sends: 3,
    });
  });

  it('resends a call refused with a redirection at once, then after a pause', async () => {
    const moved = new Error(REFUSALS['GLIDE Moved']);
    const ask = new Error(REFUSALS['GLIDE Ask']);
    expect((await run([moved, ask, 'decided'])).log).toEqual([`refused: ${moved.message}`, `refused: ${ask.message}`, `pause ${SLOT_MOVE_PAUSE_MS} ms`, 'reply: decided']);
  });

  it.each(MAY_HAVE_RUN)('never resends a call that failed with "%s": it is thrown as it is', async (message) => {
    expect(await run([new Error(message), 'resent'])).toEqual({ outcome: `thrown: ${message}`, log: [`refused: ${message}`], sends: 1 });
  });

  it('stops at an error that may have run met while resending, and throws it', async () => {
    const tryAgain = new Error(REFUSALS['GLIDE TryAgain']);
    const { outcome, sends } = await run([tryAgain, new Error('Request timed out'), 'resent']);
    expect({ outcome, sends }).toEqual({ outcome: 'thrown: Request timed out', sends: 2 });
  });

  it(`gives up after ${SLOT_MOVE_MAX_RESENDS} resends, throwing the last refusal`, async () => {
    const tryAgain = new Error(REFUSALS['node-redis TRYAGAIN']);
    const { outcome, log, sends } = await run([tryAgain]);
    expect(outcome).toBe(`thrown: ${tryAgain.message}`);
    expect(sends).toBe(1 + SLOT_MOVE_MAX_RESENDS);
    expect(log.filter((line) => line.startsWith('pause')).length).toBe(SLOT_MOVE_MAX_RESENDS);
  });
});
