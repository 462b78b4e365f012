import { validateModuleOptions } from '../../lib/config/module-options.validator.js';

describe('the coalesce module option', () => {
  it('is on by default, with no maxBatch: the Redis store takes its client\'s default', () => {
    expect(validateModuleOptions({}).coalesce).toEqual({});
  });

  it('keeps the maxBatch given', () => {
    expect(validateModuleOptions({ coalesce: { maxBatch: 16 } }).coalesce).toEqual({ maxBatch: 16 });
  });

  it('is off with false', () => {
    expect(validateModuleOptions({ coalesce: false }).coalesce).toBe(false);
  });

  it.each([0, 1.5, 10_001, '8'])('refuses maxBatch %p, naming coalesce.maxBatch and the range', (maxBatch) => {
    expect(() => validateModuleOptions({ coalesce: { maxBatch: maxBatch as number } })).toThrow(
      expect.objectContaining({ field: 'coalesce.maxBatch', message: expect.stringContaining('an integer from 1 to 10000') }),
    );
  });

  it('takes true as the default: on, the client\'s default maxBatch', () => {
    expect(validateModuleOptions({ coalesce: true }).coalesce).toEqual({});
  });

  it.each([null, 'yes', 1])('refuses %p, naming coalesce and what it takes', (value) => {
    expect(() => validateModuleOptions({ coalesce: value as never })).toThrow(expect.objectContaining({ field: 'coalesce', message: expect.stringContaining('true, false or { maxBatch? }') }));
  });
});
