import { RateLimitPolicies, RateLimitService, type MultiDecision, type RateLimitStore, type RuleKey } from '../../lib/index.js';
import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { useStores, type StoreKind } from '../support/stores.js';

/**
 * A real store whose replies the test can hold: the store decides at once, the caller sees the decision only when
 * the test lets it go. This is a request whose reply is still on the wire while something else happens.
 */
class HeldStore implements RateLimitStore {
  private held: (() => void)[] = [];
  hold = false;
  constructor(private readonly inner: RateLimitStore) {}
  consume: RateLimitStore['consume'] = async (...args) => this.after(await this.inner.consume(...args));
  consumeAll: RateLimitStore['consumeAll'] = async (...args) => this.after(await this.inner.consumeAll(...args));
  peek: RateLimitStore['peek'] = (...args) => this.inner.peek(...args);
  refund: RateLimitStore['refund'] = (...args) => this.inner.refund(...args);
  reset: RateLimitStore['reset'] = (...args) => this.inner.reset(...args);
  /** Lets every held reply through. */
  release(): void {
    for (const go of this.held.splice(0)) go();
  }
  private after<T>(value: T): Promise<T> {
    if (!this.hold) return Promise.resolve(value);
    return new Promise((resolve) => this.held.push(() => resolve(value)));
  }
}

const KINDS: StoreKind[] = ['memory', 'redis'];

describe.each(KINDS)('block cache and a refusal still in flight (%s store)', (kind) => {
  const current = useStores(kind);
  let store: HeldStore;
  let policies: RateLimitPolicies;
  let service: RateLimitService;

  beforeEach(() => {
    const { store: inner, clock, prefix } = current();
    store = new HeldStore(inner);
    policies = new RateLimitPolicies({ rules: { login: { limit: 1, window: '1m' } } });
    service = new RateLimitService(store, policies, validateModuleOptions({ clock: clock.now, keyPrefix: prefix }));
  });

  const entries = (key = 'alice'): RuleKey[] => [{ key, rule: policies.get('login')!.rule }];
  /** Sends a decision whose reply is held; resolves once the store has decided it (not once the reply is let go). */
  async function heldDecision(request: RuleKey[]): Promise<{ reply: Promise<MultiDecision> }> {
    store.hold = true;
    const reply = service.decide(request);
    // The store has answered (memory: at once; Redis: one round trip) once a peek sent after it has.
    await store.peek('anyone', request[0].rule);
    await new Promise((resolve) => setImmediate(resolve));
    store.hold = false;
    return { reply };
  }

  it('does not cache a refusal decided under the rules in force before a reload', async () => {
    expect((await service.decide(entries())).allowed).toBe(true);
    const inFlight = (await heldDecision(entries())).reply;
    policies.replaceFromConfig({ rules: { login: { limit: 100, window: '1m' } } }, 'rateLimit');
    // Other traffic after the reload clears the cache before the old refusal comes back.
    expect((await service.decide(entries('bob'))).allowed).toBe(true);
    store.release();
    expect((await inFlight).allowed).toBe(false);
    expect((await service.decide(entries())).allowed).toBe(true);
  });

  it('does not cache a refusal for entries resolved before a reload and decided after it', async () => {
    expect((await service.decide(entries())).allowed).toBe(true);
    const resolvedUnder = policies.version;
    const stale = entries();
    policies.replaceFromConfig({ rules: { login: { limit: 100, window: '1m' } } }, 'rateLimit');
    expect((await service.decide(stale, resolvedUnder)).allowed).toBe(false);
    expect((await service.decide(entries())).allowed).toBe(true);
  });

  it('does not cache a refusal whose key was refunded while its reply was in flight', async () => {
    expect((await service.decide(entries())).allowed).toBe(true);
    const inFlight = (await heldDecision(entries())).reply;
    await service.refund('alice', 'login');
    store.release();
    expect((await inFlight).allowed).toBe(false);
    expect((await service.decide(entries())).allowed).toBe(true);
  });
});
