import type { CircuitBreakerOptions, CircuitState } from '../interfaces/circuit-breaker.interface.js';
import type { Clock } from '../interfaces/clock.interface.js';

/**
 * Stops calling a failing store for a while instead of paying the timeout on every request. After
 * `failureThreshold` consecutive failures it opens for `minOpenMs`; then one call probes (half-open): success
 * closes it, failure reopens it for twice as long, up to `maxOpenMs`.
 */
export class CircuitBreaker {
  private failures = 0;
  private openMs: number;
  private openUntil = 0;
  private probing = false;
  private current: CircuitState = 'closed';
  private readonly threshold: number;
  private readonly minOpenMs: number;
  private readonly maxOpenMs: number;

  constructor(
    options: CircuitBreakerOptions = {},
    private readonly clock: Clock = () => performance.now(),
    /** Told of every state change (metrics, logs). */
    private readonly onChange?: (state: CircuitState) => void,
  ) {
    this.threshold = options.failureThreshold ?? 3;
    this.minOpenMs = options.minOpenMs ?? 500;
    this.maxOpenMs = options.maxOpenMs ?? 30_000;
    this.openMs = this.minOpenMs;
  }

  get state(): CircuitState {
    return this.current;
  }

  /** Milliseconds until the next probe may go; 0 when calls go through. */
  get retryInMs(): number {
    return this.current === 'open' ? Math.max(0, this.openUntil - this.clock()) : 0;
  }

  /** Whether this call may go to the store; when the open interval is over, exactly one caller probes. */
  tryAcquire(): boolean {
    if (this.current === 'closed') return true;
    if (this.current === 'open' && this.clock() >= this.openUntil) {
      this.set('half-open');
      this.probing = false;
    }
    if (this.current === 'half-open' && !this.probing) {
      this.probing = true;
      return true;
    }
    return false;
  }

  /** Something else says the store is back (the client reconnected): let the next call probe now. */
  probeNow(): void {
    if (this.current === 'open') this.openUntil = this.clock();
  }

  /**
   * The call let through proved nothing about the store (it failed on the caller's side): a probe ends without
   * a verdict and the next call probes, so the breaker never waits half-open for a result that will not come.
   */
  release(): void {
    this.probing = false;
  }

  success(): void {
    this.failures = 0;
    this.probing = false;
    this.openMs = this.minOpenMs;
    if (this.current !== 'closed') this.set('closed');
  }

  failure(): void {
    this.probing = false;
    if (this.current === 'half-open') {
      this.openMs = Math.min(this.openMs * 2, this.maxOpenMs);
      this.open();
    } else if (this.current === 'closed' && ++this.failures >= this.threshold) {
      this.open();
    }
  }

  private open(): void {
    this.openUntil = this.clock() + this.openMs;
    this.set('open');
  }

  private set(state: CircuitState): void {
    this.current = state;
    this.onChange?.(state);
  }
}
