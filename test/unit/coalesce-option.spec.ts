import { validateModuleOptions } from '../../lib/config/module-options.validator.js';

describe('the coalesce module option', () => {
  it('is on by default, 64 decisions per script call at most', () => {
    expect(validateModuleOptions({}).coalesce).toEqual({ maxBatch: 64 });
  });

  it('is off with false', () => {
    expect(validateModuleOptions({ coalesce: false }).coalesce).toBe(false);
  });

  it.each([0, 1.5, 10_001, '8'])('refuses maxBatch %p, naming coalesce.maxBatch and the range', (maxBatch) => {
    expect(() => validateModuleOptions({ coalesce: { maxBatch: maxBatch as number } })).toThrow(
      expect.objectContaining({ field: 'coalesce.maxBatch', message: expect.stringContaining('an integer from 1 to 10000') }),
    );
  });

  it('takes true as the default: on, 64 decisions per script call at most', () => {
    expect(validateModuleOptions({ coalesce: true }).coalesce).toEqual({ maxBatch: 64 });
  });

  it.each([null, 'yes', 1])('refuses %p, naming coalesce and what it takes', (value) => {
    expect(() => validateModuleOptions({ coalesce: value as never })).toThrow(expect.objectContaining({ field: 'coalesce', message: expect.stringContaining('true, false or { maxBatch? }') }));
  });
});
