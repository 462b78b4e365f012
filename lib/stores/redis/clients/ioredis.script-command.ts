import type { Cluster, Command, Redis } from 'ioredis';
import type { IoRedisLibrary } from './client-library.loader.js';
import { isNoFunction, isNoScript, type LuaScript } from './redis-script.call.js';

/** Per connection (its socket), the SHAs of the scripts it has sent as EVAL: its server has them since. */
const LOADED = new WeakMap<object, Set<string>>();

/**
 * Per connection, the scripts whose function library its server has (true), has refused (false: no FUNCTION on Redis
 * 6, an ACL without it, a renamed command) or is loading. A script goes as FCALL only where its library is known to be
 * loaded, so an FCALL answered "not found" is as rare as a NOSCRIPT (a FUNCTION FLUSH, or a restart that kept the
 * connection's server without its data).
 */
const FUNCTIONS = new WeakMap<object, Map<string, boolean | 'loading'>>();

/**
 * A script call whose argument list is sent as it is given. ioredis's Command flattens the list it is given
 * (Array.prototype.flat: about 12 µs for the 140 arguments of a batch of 64 fixed-window calls, a tenth of the app's
 * time per decision at 200 in flight), and a script registered with defineCommand copies it twice more before that.
 * Like such a script, it goes as EVAL the first time it is written to a connection, and as EVALSHA after: an app's
 * first decisions on a connection need no NOSCRIPT round trip. The reply is not converted from buffers to strings:
 * the scripts reply integers.
 */
function defineScriptCommand(Command: IoRedisLibrary['Command']): ScriptCommandClass {
  return class ScriptCommand extends Command {
    /** The connection it was written to (the last one, after a Cluster redirection). */
    socket?: object;

    constructor(
      private readonly script: LuaScript,
      args: string[],
      /** Always EVAL: the resend after a NOSCRIPT, which must not meet another (see callScript). */
      private readonly alwaysEval = false,
    ) {
      // Command turns numbers into strings, and puts a keyPrefix before the keys, in its constructor, on the empty
      // list: callScript has done both.
      super('evalsha', [], { replyEncoding: null });
      this.args = args;
    }

    override toWritable(socket: object): string | Buffer {
      this.socket = socket;
      const { fn, sha } = this.script;
      if (fn !== undefined && !this.alwaysEval && FUNCTIONS.get(socket)?.get(sha) === true) {
        this.name = 'fcall';
        this.args[0] = fn.name;
        return super.toWritable(socket);
      }
      let loaded = LOADED.get(socket);
      if (loaded === undefined) LOADED.set(socket, (loaded = new Set()));
      if (this.alwaysEval || !loaded.has(sha)) {
        loaded.add(sha);
        this.name = 'eval';
        this.args[0] = this.script.source;
      } else {
        // Also a command first written as FCALL, which a Cluster redirection writes again to another node.
        this.name = 'evalsha';
        this.args[0] = sha;
      }
      return super.toWritable(socket);
    }
  };
}

/** A script call as an ioredis Command, and the connection it was written to. */
interface ScriptCommand extends Command {
  socket?: object;
}
export type ScriptCommandClass = new (script: LuaScript, args: string[], alwaysEval?: boolean) => ScriptCommand;
const SCRIPT_COMMANDS = new WeakMap<IoRedisLibrary['Command'], ScriptCommandClass>();

/** The ScriptCommand class of the library a client is of (ioredis or iovalkey), made once. */
export function scriptCommandOf(library: IoRedisLibrary): ScriptCommandClass {
  let made = SCRIPT_COMMANDS.get(library.Command);
  if (!made) SCRIPT_COMMANDS.set(library.Command, (made = defineScriptCommand(library.Command)));
  return made;
}

/**
 * Runs `script` with `keys` and `argv`. A server that lost the script (a restart, a SCRIPT FLUSH, a failover)
 * replies NOSCRIPT to its EVALSHA without running it, so sending the source again (EVAL) cannot count anything
 * twice. The client's own `keyPrefix`, if it has one, is put before each of `keys`, as ioredis does for the commands
 * it builds.
 */
export async function callScript<Reply = number[]>(
  ScriptCommand: ScriptCommandClass,
  client: Redis | Cluster,
  script: LuaScript,
  keys: readonly string[],
  argv: readonly (string | number)[],
): Promise<Reply> {
  const prefix = (client.options as { keyPrefix?: string }).keyPrefix;
  const args = new Array<string>(2 + keys.length + argv.length);
  args[0] = script.sha;
  args[1] = String(keys.length);
  for (let i = 0; i < keys.length; i++) args[2 + i] = prefix ? prefix + keys[i] : keys[i];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    args[2 + keys.length + i] = typeof arg === 'string' ? arg : String(arg);
  }
  const command = new ScriptCommand(script, args);
  let reply: Reply;
  try {
    reply = await send<Reply>(client, command);
  } catch (error) {
    const noFunction = isNoFunction(error);
    if (!noFunction && !isNoScript(error)) throw error;
    // The connection's server no longer has it: the next call on this connection goes as EVAL too. The resend is an
    // EVAL whatever connection it takes (with calls in flight across two SCRIPT FLUSHes, or on a Cluster node that
    // took over a slot, a connection marked as having it may not).
    if (command.socket) {
      if (noFunction) FUNCTIONS.get(command.socket)?.delete(script.sha);
      LOADED.get(command.socket)?.delete(script.sha);
    }
    return await send<Reply>(client, new ScriptCommand(script, args.slice(), true));
  }
  if (script.fn !== undefined && command.name !== 'fcall' && command.socket !== undefined) loadFunction(client, command.socket, script);
  return reply;
}

/**
 * Has the server of `socket` load `script`'s function library, once per connection, after the script ran there as EVAL
 * or EVALSHA: the calls after it go as FCALL once the library is loaded, and as EVALSHA meanwhile, in the order they are
 * made. Its server is the client (standalone, Sentinel) or the Cluster node whose connection `socket` is.
 */
function loadFunction(client: Redis | Cluster, socket: object, script: LuaScript): void {
  let states = FUNCTIONS.get(socket);
  if (states === undefined) FUNCTIONS.set(socket, (states = new Map()));
  if (states.has(script.sha)) return;
  const server = client.isCluster ? (client as Cluster).nodes('all').find((node) => node.stream === socket) : (client as Redis).stream === socket ? (client as Redis) : undefined;
  if (server === undefined) return;
  const loaded = states;
  loaded.set(script.sha, 'loading');
  // REPLACE: another connection or instance may have loaded it, the same code under the same name (no error to log).
  server.call('FUNCTION', 'LOAD', 'REPLACE', script.fn!.library).then(
    () => loaded.set(script.sha, true),
    (error: Error) => {
      // The server refused it (no FUNCTION before Redis 7, an ACL, a renamed command): EVALSHA stays.
      if (error.name === 'ReplyError') loaded.set(script.sha, false);
      // The connection failed: tried again after the next call on it.
      else loaded.delete(script.sha);
    },
  );
}

function send<Reply>(client: Redis | Cluster, command: Command): Promise<Reply> {
  client.sendCommand(command);
  return command.promise as Promise<Reply>;
}
