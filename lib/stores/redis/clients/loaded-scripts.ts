import { isNoFunction, isNoScript, type LuaScript } from './redis-script.call.js';

/**
 * How long a place that did not load a script's function library (refused, or not reached) keeps to EVALSHA before
 * it is asked again, in ms.
 */
const RETRY_FUNCTION_LOAD_MS = 60_000;

/**
 * The scripts an adapter has sent as EVAL, per place (a Cluster node, a slot, or '' for the one server): that
 * server has them since, so they go as EVALSHA there. A script not known there goes as EVAL at once, never as an
 * EVALSHA answered NOSCRIPT and resent: the resend would run after calls made later in the same turn (a batch of
 * another script on the same keys), and decide them out of order. And per place, the scripts whose function library
 * it has loaded (they go as FCALL there), is loading, or did not load (when, in ms).
 */
export class LoadedScripts {
  private readonly byPlace = new Map<string, Set<string>>();
  private readonly functions = new Map<string, Map<string, true | 'loading' | number>>();

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

  /** Whether `sha` goes as FCALL to `place`: its library was loaded there. */
  hasFunction(place: string, sha: string): boolean {
    return this.functions.get(place)?.get(sha) === true;
  }

  /**
   * Whether to ask `place` to load `sha`'s library now: neither loaded, nor loading, nor refused lately. Marks it
   * loading.
   */
  startLoading(place: string, sha: string, now = Date.now()): boolean {
    let states = this.functions.get(place);
    if (states === undefined) this.functions.set(place, (states = new Map()));
    const state = states.get(sha);
    if (state === true || state === 'loading' || (typeof state === 'number' && now - state < RETRY_FUNCTION_LOAD_MS)) return false;
    states.set(sha, 'loading');
    return true;
  }

  /** The answer to startLoading's FUNCTION LOAD: loaded (or there already), or not. */
  loadingDone(place: string, sha: string, loaded: boolean, now = Date.now()): void {
    this.functions.get(place)?.set(sha, loaded ? true : now);
  }

  /** `place` answered "Function not found": its server lost its libraries (a FUNCTION FLUSH, a restart). */
  forgetFunctions(place: string): void {
    this.functions.delete(place);
  }
}

/**
 * Where a client's script libraries are loaded when that is not where each call goes: `place` names them all in
 * LoadedScripts, and `load` sends a command to every one (a GLIDE Cluster client, whose places for EVALSHA are
 * slots: it shows no slot table, so its libraries go to every primary at once).
 */
export interface FunctionPlaces {
  readonly place: string;
  load(args: string[]): Promise<unknown>;
}

/**
 * Sends a script call to `place` through `send`, `args` being EVAL's after its first two (set here): as FCALL where
 * the script's function library is loaded, else as EVALSHA where the script is known, else as EVAL; after a NOSCRIPT
 * or a "Function not found" (the call did not run) as EVAL again, to the same place. Once a call ran there as EVAL or
 * EVALSHA, the place is asked to load the script's library (FUNCTION LOAD through `send`, or to every place of
 * `functions`), in the background: the calls after that answer go as FCALL, those before it as EVALSHA, in the order
 * they are made.
 */
export async function sendScript(
  loaded: LoadedScripts,
  place: string,
  script: LuaScript,
  args: string[],
  send: (args: string[]) => Promise<unknown>,
  /** Where the libraries are loaded, when not at `place` (see FunctionPlaces); false: never as FCALL. */
  functions: boolean | FunctionPlaces = true,
): Promise<unknown> {
  const sha = script.sha;
  const fn = functions !== false ? script.fn : undefined;
  const libraries = typeof functions === 'object' ? functions : undefined;
  const fnPlace = libraries?.place ?? place;
  const asFunction = fn !== undefined && loaded.hasFunction(fnPlace, sha);
  const known = asFunction || loaded.knownOrMark(place, sha);
  args[0] = asFunction ? 'FCALL' : known ? 'EVALSHA' : 'EVAL';
  args[1] = asFunction ? fn.name : known ? sha : script.source;
  let reply: unknown;
  try {
    reply = await send(args);
  } catch (error) {
    if (asFunction ? !isNoFunction(error) : !known || !isNoScript(error)) throw error;
    // "Function not found" or NOSCRIPT: the call did not run; its source goes to the same node (same key).
    if (asFunction) loaded.forgetFunctions(fnPlace);
    else loaded.forget(place);
    loaded.knownOrMark(place, sha);
    args[0] = 'EVAL';
    args[1] = script.source;
    reply = await send(args);
  }
  if (!asFunction && fn !== undefined && loaded.startLoading(fnPlace, sha)) {
    // REPLACE: another client may have loaded it, the same code under the same name (GLIDE would log the error).
    (libraries?.load ?? send)(['FUNCTION', 'LOAD', 'REPLACE', fn.library]).then(
      () => loaded.loadingDone(fnPlace, sha, true),
      // No FUNCTION before Redis 7, an ACL, a renamed command, a lost connection, a primary of several that refused:
      // EVALSHA, asked again after RETRY_FUNCTION_LOAD_MS.
      () => loaded.loadingDone(fnPlace, sha, false),
    );
  }
  return reply;
}
