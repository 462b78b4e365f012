import { validateModuleOptions } from '../../lib/config/module-options.validator.js';
import { Redis } from 'ioredis';
import { RedisStore } from '../../lib/index.js';

describe('the functions option', () => {
  it('is on by default', () => {
    expect(validateModuleOptions({}).functions).toBe(true);
  });

  it('is off with false', () => {
    expect(validateModuleOptions({ functions: false }).functions).toBe(false);
  });

  it.each([null, 'yes', 1])('refuses %p at start-up, naming functions and what it takes', (value) => {
    expect(() => validateModuleOptions({ functions: value as never })).toThrow(expect.objectContaining({ field: 'functions', message: expect.stringContaining('true or false') }));
  });

  it.each([null, 'no', 0])('refuses %p as a RedisStore option, naming it', (value) => {
    // A client that is never opened: the store is refused before it would send anything.
    const client = new Redis({ lazyConnect: true });
    expect(() => new RedisStore(client, { functions: value as never })).toThrow('Invalid Redis store option "functions"');
  });
});
