import { defineRule, type Decision } from '../../lib/index.js';
import { errorDetail } from '../../lib/http/rate-limit.exception.js';

const rule = defineRule({ limit: 2, window: '10s' }, 'default');
const refusal = (d: Partial<Decision> = {}): Decision => ({ allowed: false, limit: 2, remaining: 0, resetAfterMs: 10_000, retryAfterMs: 10_000, ...d });

describe('errorMessage\'s detail: totalHits as throttler counts it', () => {
  it('says 3 for the third request under a limit of 2, where used says 2', () => {
    expect(errorDetail({ rule, decision: refusal() })).toMatchObject({ rule: 'default', used: 2, totalHits: 3 });
  });

  it('counts the refused request\'s cost: a request of 3 units refused with 1 used says 4', () => {
    expect(errorDetail({ rule, decision: refusal({ limit: 5, remaining: 4 }), cost: 3 })).toMatchObject({ used: 1, totalHits: 4 });
  });
});
