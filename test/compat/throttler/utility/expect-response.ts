import { httPromise, type HttpResponse } from './httpromise.js';

/**
 * The part of pactum's `spec()` throttler's suites use, over throttler's httPromise: `spec(baseUrl).get(path)`,
 * then `expectStatus`, `expectHeader` (equal) and `expectHeaderContains` (a regex or a substring), checked in order
 * when awaited.
 */
export function spec(baseUrl: string) {
  return {
    get(path: string) {
      const checks: ((res: HttpResponse) => void)[] = [];
      const chain = {
        expectStatus(status: number) {
          checks.push((res) => expect(res.status).toBe(status));
          return chain;
        },
        expectHeader(name: string, value: string) {
          checks.push((res) => expect(res.headers[name]).toBe(value));
          return chain;
        },
        expectHeaderContains(name: string, value: string | RegExp) {
          checks.push((res) => (typeof value === 'string' ? expect(res.headers[name]).toContain(value) : expect(res.headers[name]).toMatch(value)));
          return chain;
        },
        expect(check: (ctx: { res: HttpResponse }) => void) {
          checks.push((res) => check({ res }));
          return chain;
        },
        then<T>(resolve: (res: HttpResponse) => T, reject?: (error: unknown) => T) {
          return httPromise(baseUrl + path)
            .then((res) => {
              for (const check of checks) check(res);
              return res;
            })
            .then(resolve, reject);
        },
      };
      return chain;
    },
  };
}
