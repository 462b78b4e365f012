import { floorTo } from '../../lib/algorithms/algorithm.interface.js';

/** The remainder it replaces, in exact integer arithmetic. */
const byRemainder = (value: number, step: number): number => Number(BigInt(value) - (BigInt(value) % BigInt(step)));

describe('floorTo, the start of the step a µs instant falls in', () => {
  const now = 1_764_000_000_000_000; // late 2025 in µs: past 2^31, where % is a floating-point remainder

  it.each([1, 2, 3, 7, 1_000, 60_000_000, 86_400_000_000, 999_999_937])('is value - value %% step at and around every multiple of %p', (step) => {
    const base = Math.floor(now / step) * step;
    for (let k = -3; k <= 3; k++) {
      for (const value of [base + k * step - 1, base + k * step, base + k * step + 1]) expect(floorTo(value, step)).toBe(byRemainder(value, step));
    }
  });

  it('is exact next to 2^53, where a quotient rounds the most', () => {
    for (const step of [3, 1_000_003, 60_000_000]) {
      for (let value = Number.MAX_SAFE_INTEGER - 2 * step; value <= Number.MAX_SAFE_INTEGER; value += Math.ceil(step / 3)) {
        expect(floorTo(value, step)).toBe(byRemainder(value, step));
      }
    }
  });

  it('agrees with the remainder on random instants and steps', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 10_000; i++) {
      const step = 1 + Math.floor(random() * 10 ** Math.floor(random() * 12));
      const value = Math.floor(random() * 2 ** 52);
      expect(floorTo(value, step)).toBe(byRemainder(value, step));
    }
  });
});
