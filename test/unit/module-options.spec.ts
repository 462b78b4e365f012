import { validateModuleOptions } from '../../lib/config/module-options.validator.js';

describe('validateModuleOptions', () => {
  it('fills in the defaults', () => {
    expect(validateModuleOptions({})).toMatchObject({ keyPrefix: 'rl', headers: 'draft', ipv6Subnet: 64, errorMessage: 'Too Many Requests', configPath: 'rateLimit', refreshIntervalMs: 0, trustProxy: undefined });
  });

  it.each([
    [{ headers: 'ietf' }, 'headers'],
    [{ ipv6Subnet: 0 }, 'ipv6Subnet'],
    [{ ipv6Subnet: 129 }, 'ipv6Subnet'],
    [{ keyPrefix: 'a{b}' }, 'keyPrefix'],
    [{ trustProxy: -1 }, 'trustProxy'],
    [{ trustProxy: ['not-an-address'] }, 'trustProxy'],
    [{ refreshIntervalMs: 1000 }, 'refreshIntervalMs'],
    [{ skip: true }, 'skip'],
    [{ config: {} }, 'config'],
    [{ storage: 'redis' }, 'storage'],
  ])('refuses %j naming %s', (options, field) => {
    expect(() => validateModuleOptions(options as never)).toThrow(expect.objectContaining({ field }));
  });

  it('trusts the nearest n hops for a numeric trustProxy', () => {
    const trust = validateModuleOptions({ trustProxy: 1 }).trustProxy!;
    expect([trust('10.0.0.1', 0), trust('10.0.0.2', 1)]).toEqual([true, false]);
  });

  it('trusts only the listed ranges', () => {
    const trust = validateModuleOptions({ trustProxy: ['10.0.0.0/8'] }).trustProxy!;
    expect([trust('10.1.2.3', 0), trust('127.0.0.1', 0)]).toEqual([true, false]);
  });
});
