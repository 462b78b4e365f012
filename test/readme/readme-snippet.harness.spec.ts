import { fileURLToPath } from 'node:url';
import { compileSnippets } from './readme-snippet.compiler.js';
import { extractSnippets } from './readme-snippet.extractor.js';

/**
 * The README check is only worth having if it fails: a markdown fixture with one broken block per context
 * (and one correct block beside each) must report each mistake at its markdown line, and nothing for the rest.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const fence = '```';

const FIXTURE = [
  '# Whole files', //                                                                   1
  `${fence}ts`, //                                                                       2
  "RateLimitModule.forRoot({ defaultRule: { limit: 5, windw: '1m' } });", //             3
  fence, //                                                                              4
  `${fence}ts`, //                                                                       5
  "RateLimitModule.forRoot({ defaultRule: { limit: 5, window: '1m' } });", //            6
  fence, //                                                                              7
  '## Service calls', //                                                                 8
  '<!-- snippet: service-calls -->', //                                                  9
  `${fence}ts`, //                                                                      10
  "await this.limits.consume(`phone:${phone}`, 'sms');", //                             11
  "await this.limits.consme(key, rule);", //                                            12
  fence, //                                                                             13
  '## Decorators', //                                                                   14
  '- a list item', //                                                                   15
  '', //                                                                                16
  '  <!-- snippet: decorator -->', //                                                   17
  `  ${fence}ts`, //                                                                    18
  "  @RateLimit({ limit: 5, window: '1m', algoritm: 'gcra' })", //                      19
  `  ${fence}`, //                                                                      20
  '## Class bodies', //                                                                 21
  '<!-- snippet: class-body -->', //                                                    22
  `${fence}ts`, //                                                                      23
  "@Get('me') @RateLimit('1m', 30, 'token-bucket') me() {}", //                         24
  "@SkipRateLimit(42) health() {}", //                                                  25
  fence, //                                                                             26
  '## Options', //                                                                      27
  '<!-- snippet: options -->', //                                                       28
  `${fence}ts`, //                                                                      29
  "{ globalGuard: true, headers: 'draft', failurePolicy: 'opn' }", //                   30
  fence, //                                                                             31
  '<!-- snippet: no-such-context -->', //                                               32
  `${fence}ts`, //                                                                      33
  'const x = 1;', //                                                                    34
  fence, //                                                                             35
].join('\n');

const snippets = extractSnippets(FIXTURE);
let diagnostics: string[][] = [];

beforeAll(() => {
  diagnostics = compileSnippets(snippets, { root, outDir: root + 'test/readme/.tmp/harness', markdownName: 'FIXTURE.md' });
});

describe('the README snippet check', () => {
  it('names each block by its heading, first line, markdown line and context', () => {
    expect(snippets.map((s) => [s.heading, s.line, s.context, s.firstLine])).toEqual([
      ['Whole files', 3, 'module', "RateLimitModule.forRoot({ defaultRule: { limit: 5, windw: '1m' } });"],
      ['Whole files', 6, 'module', "RateLimitModule.forRoot({ defaultRule: { limit: 5, window: '1m' } });"],
      ['Service calls', 11, 'service-calls', "await this.limits.consume(`phone:${phone}`, 'sms');"],
      ['Decorators', 19, 'decorator', "@RateLimit({ limit: 5, window: '1m', algoritm: 'gcra' })"],
      ['Class bodies', 24, 'class-body', "@Get('me') @RateLimit('1m', 30, 'token-bucket') me() {}"],
      ['Options', 30, 'options', "{ globalGuard: true, headers: 'draft', failurePolicy: 'opn' }"],
      ['Options', 34, 'no-such-context', 'const x = 1;'],
    ]);
  });

  it('reports a misspelled rule option in a whole-file block at its markdown line', () => {
    expect(diagnostics[0]).toEqual([expect.stringMatching(/^FIXTURE\.md:3:\d+ TS2353 .*'windw'/)]);
  });

  it('reports nothing for a correct block', () => {
    expect(diagnostics[1]).toEqual([]);
  });

  it('reports a misspelled service method and accepts the stand-ins of the service-calls context', () => {
    expect(diagnostics[2]).toEqual([expect.stringMatching(/^FIXTURE\.md:12:\d+ TS2551 .*'consme'/)]);
  });

  it('reports a misspelled decorator option in an indented decorator block', () => {
    expect(diagnostics[3]).toEqual([expect.stringMatching(/^FIXTURE\.md:19:\d+ TS2769 No overload matches this call[\s\S]*'algoritm'/)]);
  });

  it('reports a wrong argument in a class-body block', () => {
    expect(diagnostics[4]).toEqual([expect.stringMatching(/^FIXTURE\.md:25:\d+ TS2345 .*number/)]);
  });

  it('reports a value outside an option\'s type in an options block', () => {
    expect(diagnostics[5]).toEqual([expect.stringMatching(/^FIXTURE\.md:30:\d+ TS2820 .*"opn"/)]);
  });

  it('refuses an unknown context, naming it and the known ones', () => {
    expect(diagnostics[6]).toEqual([
      'FIXTURE.md:34: unknown snippet context "no-such-context" (expected one of module, service-calls, class-body, decorator, e2e-test, options)',
    ]);
  });
});
