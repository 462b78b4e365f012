import 'reflect-metadata';
import { jest } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { InternalServerErrorException, Logger, UseInterceptors, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { WsException } from '@nestjs/websockets';
import { lastValueFrom, Observable, of, Subject, throwError } from 'rxjs';
import { MemoryStore, RateLimit, RateLimitGuard, RateLimitInterceptor, RateLimitPolicies, RateLimitService, type RateLimitModuleOptions, type RateLimitRejection } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { ManualClock } from '../support/manual.clock.js';

const USER = { key: 'header:x-user', shared: true } as const;

/**
 * A gateway's handlers: `export` under a rate rule and a concurrency rule, `tried` under a shadow concurrency rule;
 * RateLimitInterceptor on the class holds their leases.
 */
@UseInterceptors(RateLimitInterceptor)
class ExportsGateway {
  @RateLimit({ name: 'calls', algorithm: 'fixed-window', limit: 5, window: '1m', ...USER })
  @RateLimit({ name: 'exports', algorithm: 'concurrency', limit: 1, leaseMs: '1m', ...USER })
  export() {}

  @RateLimit({ name: 'trial', algorithm: 'concurrency', limit: 1, leaseMs: '1m', mode: 'shadow', ...USER })
  tried() {}
}

/** The same handlers with no RateLimitInterceptor to hold their leases. */
class UninterceptedGateway extends ExportsGateway {}
Reflect.defineMetadata('__interceptors__', [], UninterceptedGateway);

/** A socket.io-like client: its handshake names the user, and it emits 'disconnect'. */
class Client extends EventEmitter {
  readonly handshake = { address: '10.0.0.1', headers: { 'x-user': 'u1' } };
}

/** A new context per message: Nest gives each handler call its own arguments array. */
function message(client: Client, handler: keyof ExportsGateway, gateway: typeof ExportsGateway = ExportsGateway): ExecutionContext {
  const args = [client, { n: 1 }];
  return {
    getType: () => 'ws',
    getClass: () => gateway,
    getHandler: () => ExportsGateway.prototype[handler],
    getArgs: () => args,
    getArgByIndex: (index: number) => args[index],
    switchToWs: () => ({ getClient: () => client, getData: () => args[1], getPattern: () => handler }),
  } as unknown as ExecutionContext;
}

function setup(options: RateLimitModuleOptions = {}, Guard: typeof RateLimitGuard = RateLimitGuard) {
  const clock = new ManualClock(1_700_000_040_000);
  const settings = validateModuleOptions({ clock: clock.now, ...options });
  const policies = new RateLimitPolicies({});
  const service = new RateLimitService(new MemoryStore({ clock: clock.now }), policies, settings);
  const guard = new Guard(new Reflector(), service, policies, settings);
  const interceptor = new RateLimitInterceptor(settings);
  /** Runs a message through the guard then the interceptor, as Nest does once every guard admitted it. */
  const run = async <T>(context: ExecutionContext, handler: Observable<T>): Promise<Observable<T>> => {
    await guard.canActivate(context);
    return interceptor.intercept(context, { handle: () => handler }) as Observable<T>;
  };
  const inFlight = async (rule: 'exports' | 'trial') => {
    const probe = await service.acquire('header:x-user:u1', service.rule({ name: rule, algorithm: 'concurrency', limit: 1, leaseMs: '1m' }));
    await probe.lease?.release();
    return probe.acquired ? 0 : 1;
  };
  const callsLeft = async () => (await service.peek('header:x-user:u1', { name: 'calls', algorithm: 'fixed-window', limit: 5, window: '1m' })).remaining + 1;
  return { service, guard, interceptor, run, inFlight, callsLeft };
}

/** A handler held until `end` completes it (or fails it). */
function heldHandler() {
  const end = new Subject<string>();
  let ran = 0;
  const handler = new Observable<string>((subscriber) => {
    ran++;
    return end.subscribe(subscriber);
  });
  return { end, handler, ran: () => ran };
}

describe('leases of calls without an HTTP response (WebSocket messages)', () => {
  it('holds no lease for a message the guard admitted until RateLimitInterceptor runs: a later guard refusing it leaves nothing held', async () => {
    const { guard, inFlight } = setup();
    const context = message(new Client(), 'export');
    const admitted = guard.canActivate(context);
    await expect(admitted).resolves.toBe(true);
    // Another guard refuses: Nest never calls the interceptor.
    expect(await inFlight('exports')).toBe(0);
  });

  it('refuses a message of a handler RateLimitInterceptor does not run for, charging nothing: no limit would hold its lease', async () => {
    const { guard, inFlight, callsLeft } = setup();
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      await expect(guard.canActivate(message(new Client(), 'export', UninterceptedGateway))).rejects.toThrow(InternalServerErrorException);
      expect(String(logged.mock.calls[0]?.[0])).toContain('@UseInterceptors(RateLimitInterceptor)');
    } finally {
      logged.mockRestore();
    }
    expect(await callsLeft()).toBe(5);
    expect(await inFlight('exports')).toBe(0);
  });

  it('takes the lease when the handler is subscribed to, and releases it when the handler completes', async () => {
    const { run, inFlight } = setup();
    const { end, handler } = heldHandler();
    const result = lastValueFrom(await run(message(new Client(), 'export'), handler));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await inFlight('exports')).toBe(1);
    end.next('done');
    end.complete();
    await expect(result).resolves.toBe('done');
    expect(await inFlight('exports')).toBe(0);
  });

  it('releases the lease when the handler fails', async () => {
    const { run, inFlight } = setup();
    await expect(lastValueFrom(await run(message(new Client(), 'export'), throwError(() => new Error('boom'))))).rejects.toThrow('boom');
    expect(await inFlight('exports')).toBe(0);
  });

  it('refuses a message whose lease is not free with the WsException the guard throws, refunding its rate rule and not running its handler', async () => {
    const { run, inFlight, callsLeft } = setup();
    const client = new Client();
    const first = heldHandler();
    const held = lastValueFrom(await run(message(client, 'export'), first.handler));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await callsLeft()).toBe(4);
    const second = heldHandler();
    const refusal = await lastValueFrom(await run(message(client, 'export'), second.handler)).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(WsException);
    expect((refusal as WsException).getError()).toEqual({ statusCode: 429, message: 'Too Many Requests', retryAfter: 1 });
    expect(second.ran()).toBe(0);
    // The refused message's unit of the rate rule was given back; the held one keeps its own and its lease.
    expect(await callsLeft()).toBe(4);
    expect(await inFlight('exports')).toBe(1);
    first.end.complete();
    await held.catch(() => undefined);
    expect(await inFlight('exports')).toBe(0);
  });

  it("passes an overridden throwRateLimitException the refusal of a lease taken in the interceptor, with every rule's decision", async () => {
    const rejections: RateLimitRejection[] = [];
    class RecordingGuard extends RateLimitGuard {
      protected override async throwRateLimitException(context: ExecutionContext, rejection: RateLimitRejection): Promise<never> {
        rejections.push(rejection);
        return super.throwRateLimitException(context, rejection);
      }
    }
    const { run } = setup({}, RecordingGuard);
    const client = new Client();
    const first = heldHandler();
    void lastValueFrom(await run(message(client, 'export'), first.handler)).catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    await lastValueFrom(await run(message(client, 'export'), of('never'))).catch(() => undefined);
    expect(rejections).toHaveLength(1);
    expect(rejections[0].retryAfterMs).toBe(1_000);
    expect(rejections[0].outcomes.map((o) => [o.rule.name, o.decision.allowed])).toEqual([
      ['calls', true],
      ['exports', false],
    ]);
    first.end.complete();
  });

  it('admits a message whose shadow concurrency rule finds no free slot', async () => {
    const { run } = setup();
    const client = new Client();
    const first = heldHandler();
    void lastValueFrom(await run(message(client, 'tried'), first.handler)).catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(lastValueFrom(await run(message(client, 'tried'), of('second')))).resolves.toBe('second');
    first.end.complete();
  });

  it('releases the lease when the client disconnects before the handler ends, and stops listening once the handler ends', async () => {
    const { run, inFlight } = setup();
    const client = new Client();
    const { end, handler } = heldHandler();
    const result = lastValueFrom(await run(message(client, 'export'), handler));
    await new Promise((resolve) => setImmediate(resolve));
    expect(client.listenerCount('disconnect')).toBe(1);
    client.emit('disconnect');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await inFlight('exports')).toBe(0);
    end.complete();
    await result.catch(() => undefined);
    expect([client.listenerCount('disconnect'), client.listenerCount('close')]).toEqual([0, 0]);
  });

  it('releases the lease of a handler unsubscribed from, even while its lease was being taken', async () => {
    const { run, inFlight } = setup();
    const during = heldHandler();
    (await run(message(new Client(), 'export'), during.handler)).subscribe().unsubscribe();
    await new Promise((resolve) => setImmediate(resolve));
    expect(during.ran()).toBe(0);
    expect(await inFlight('exports')).toBe(0);
    const after = heldHandler();
    const subscription = (await run(message(new Client(), 'export'), after.handler)).subscribe();
    await new Promise((resolve) => setImmediate(resolve));
    expect([after.ran(), await inFlight('exports')]).toEqual([1, 1]);
    subscription.unsubscribe();
    expect(await inFlight('exports')).toBe(0);
  });
});
