import type { Decision } from '../../lib/index.js';
import { decidingIndex } from '../../lib/observability/decision.spans.js';

const admitted = (remaining: number, extra: Partial<Decision> = {}): Decision => ({ allowed: true, limit: 10, remaining, resetAfterMs: 1_000, retryAfterMs: 0, ...extra });
const refused = (retryAfterMs: number, extra: Partial<Decision> = {}): Decision => ({ allowed: false, limit: 10, remaining: 0, resetAfterMs: 60_000, retryAfterMs, ...extra });

describe('the deciding rule of a request with several rules, set on its span', () => {
  it('is, on a refusal, the refusing rule that makes the client wait longest', () => {
    expect(decidingIndex([admitted(5), refused(1_000), refused(30_000)], false)).toBe(2);
  });

  it('is, on a refusal, never a shadow rule, even with a longer wait', () => {
    expect(decidingIndex([refused(1_000), refused(90_000, { shadow: true })], false)).toBe(0);
  });

  it('is, on an admission a shadow rule refused, that shadow rule', () => {
    expect(decidingIndex([admitted(1), refused(5_000, { shadow: true })], true)).toBe(1);
  });

  it('is, on an admission, the rule with the fewest units left', () => {
    expect(decidingIndex([admitted(7), admitted(2), admitted(4)], true)).toBe(1);
  });

  it('takes the full reset as the wait of a refusal no wait lets through', () => {
    expect(decidingIndex([refused(5_000), refused(-1)], false)).toBe(1);
  });
});
