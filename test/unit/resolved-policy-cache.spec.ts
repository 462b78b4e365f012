import type { ExecutionContext } from '@nestjs/common';
import { compileRoutePolicy } from '../../lib/config/policy.compiler.js';
import { RateLimitConfigError } from '../../lib/index.js';

/**
 * A request-dependent rule keeps the policies it compiled per resolved values, so that a steady tier is validated
 * once (config/resolvable-policy.compiler.ts). The values are read as a static rule's are: a number is taken as it
 * is, a decimal string as env vars bring it (`limit: "5"` is 5) but a duration string needs a unit (`window: "5000"`
 * is an error, 5000 is 5000 ms). So values that print alike but are of different types must never share an entry:
 * the cache would admit a value that validation refuses, or the reverse.
 */
const context = {} as ExecutionContext;

/** A rule whose `field` returns what the test puts in `value.current` for the next request. */
function resolving(field: 'limit' | 'window' | 'blockMs' | 'cost', initial: unknown) {
  const value = { current: initial };
  const options = { limit: 5, window: '1m', [field]: () => value.current };
  const policy = compileRoutePolicy(options, 'r', 'rules.r');
  return { value, resolve: () => policy.resolve!(context) };
}

describe('the policies a request-dependent rule keeps per resolved values', () => {
  it('reads a limit of "5" (a decimal string, as from a header) as 5, as it reads the number 5, in either order', async () => {
    const { value, resolve } = resolving('limit', 5);
    expect((await resolve()).rule.limit).toBe(5);
    value.current = '5';
    expect((await resolve()).rule.limit).toBe(5);
    value.current = 5;
    expect((await resolve()).rule.limit).toBe(5);
  });

  it('refuses a window of "5000" (no unit) after it admitted the number 5000 (ms): the two never share an entry', async () => {
    const { value, resolve } = resolving('window', 5000);
    expect((await resolve()).rule.windowMs).toBe(5000);
    value.current = '5000';
    await expect(resolve()).rejects.toThrow(expect.objectContaining({ field: 'rules.r.window', value: '5000' }));
    value.current = 5000;
    expect((await resolve()).rule.windowMs).toBe(5000);
    value.current = '5000';
    await expect(resolve()).rejects.toThrow(RateLimitConfigError);
  });

  it('refuses a blockMs of "3" (no unit) after it admitted the number 3 (ms)', async () => {
    const { value, resolve } = resolving('blockMs', 3);
    expect((await resolve()).rule.blockMs).toBe(3);
    value.current = '3';
    await expect(resolve()).rejects.toThrow(expect.objectContaining({ field: 'rules.r.blockMs', value: '3' }));
  });

  it('refuses a cost of "undefined" (a string) after it took undefined as the default cost of 1', async () => {
    const { value, resolve } = resolving('cost', undefined);
    expect((await resolve()).cost).toBe(1);
    value.current = 'undefined';
    await expect(resolve()).rejects.toThrow(expect.objectContaining({ field: 'rules.r.cost', value: 'undefined' }));
  });

  it('refuses a cost of null after it took undefined as the default cost of 1, and takes "2" as 2', async () => {
    const { value, resolve } = resolving('cost', undefined);
    expect((await resolve()).cost).toBe(1);
    value.current = null;
    await expect(resolve()).rejects.toThrow(RateLimitConfigError);
    value.current = '2';
    expect((await resolve()).cost).toBe(2);
  });
});
