import { CircuitBreaker } from '../../lib/resilience/circuit-breaker.js';
import { ManualClock } from '../support/manual.clock.js';

describe('CircuitBreaker', () => {
  const make = () => {
    const clock = new ManualClock(0);
    const states: string[] = [];
    const breaker = new CircuitBreaker({ failureThreshold: 3, minOpenMs: 500, maxOpenMs: 2_000 }, clock.now, (s) => states.push(s));
    return { clock, breaker, states };
  };
  const fail = (breaker: CircuitBreaker, times: number) => {
    for (let i = 0; i < times; i++) breaker.failure();
  };

  it('stays closed below the failure threshold', () => {
    const { breaker } = make();
    fail(breaker, 2);
    expect([breaker.state, breaker.tryAcquire()]).toEqual(['closed', true]);
  });

  it('opens at the threshold and refuses calls for the open interval', () => {
    const { breaker, clock } = make();
    fail(breaker, 3);
    expect(breaker.tryAcquire()).toBe(false);
    clock.advance(499);
    expect([breaker.tryAcquire(), breaker.retryInMs]).toEqual([false, 1]);
  });

  it('lets exactly one probe through once the interval is over', () => {
    const { breaker, clock } = make();
    fail(breaker, 3);
    clock.advance(500);
    expect([breaker.tryAcquire(), breaker.tryAcquire(), breaker.state]).toEqual([true, false, 'half-open']);
  });

  it('closes after a successful probe', () => {
    const { breaker, clock, states } = make();
    fail(breaker, 3);
    clock.advance(500);
    breaker.tryAcquire();
    breaker.success();
    expect([breaker.state, breaker.tryAcquire()]).toEqual(['closed', true]);
    expect(states).toEqual(['open', 'half-open', 'closed']);
  });

  it('doubles the open interval after each failed probe, up to the maximum', () => {
    const { breaker, clock } = make();
    fail(breaker, 3);
    const intervals: number[] = [];
    for (let i = 0; i < 4; i++) {
      clock.advance(breaker.retryInMs);
      breaker.tryAcquire();
      breaker.failure();
      intervals.push(breaker.retryInMs);
    }
    expect(intervals).toEqual([1_000, 2_000, 2_000, 2_000]);
  });

  it('starts again from the shortest interval after it has closed', () => {
    const { breaker, clock } = make();
    fail(breaker, 3);
    clock.advance(500);
    breaker.tryAcquire();
    breaker.failure();
    clock.advance(1_000);
    breaker.tryAcquire();
    breaker.success();
    fail(breaker, 3);
    expect(breaker.retryInMs).toBe(500);
  });

  it('lets a probe through at once when told the store is back', () => {
    const { breaker } = make();
    fail(breaker, 3);
    breaker.probeNow();
    expect([breaker.tryAcquire(), breaker.state]).toEqual([true, 'half-open']);
  });

  it('lets the next call probe when a probe is released without a verdict', () => {
    const { breaker, clock } = make();
    fail(breaker, 3);
    clock.advance(500);
    breaker.tryAcquire();
    breaker.release();
    expect([breaker.tryAcquire(), breaker.state]).toEqual([true, 'half-open']);
  });
});
