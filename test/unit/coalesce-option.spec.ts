import { validateModuleOptions } from '../../lib/config/module-options.validator.js';

describe('the coalesce module option', () => {
  it('is on by default, 256 decisions per script call at most', () => {
    expect(validateModuleOptions({}).coalesce).toEqual({ maxBatch: 32 });
  });

  it('is off with false', () => {
    expect(validateModuleOptions({ coalesce: false }).coalesce).toBe(false);
  });

  it.each([0, 1.5, 10_001, '8'])('refuses maxBatch %p, naming coalesce.maxBatch and the range', (maxBatch) => {
    expect(() => validateModuleOptions({ coalesce: { maxBatch: maxBatch as number } })).toThrow(
      expect.objectContaining({ field: 'coalesce.maxBatch', message: expect.stringContaining('an integer from 1 to 10000') }),
    );
  });

  it('refuses true, naming coalesce and what it takes', () => {
    expect(() => validateModuleOptions({ coalesce: true as never })).toThrow(expect.objectContaining({ field: 'coalesce', message: expect.stringContaining('false or { maxBatch? }') }));
  });
});
