/**
 * The `timeoutMs` of test apps on Redis whose tests are not about timeouts. The module's default, 50 ms, is right for
 * production; on a loaded test machine a round trip to the test's redis-server, or a GC pause of the test's own
 * process, can take longer, and the failure policy then decides in Redis's place (by default from its own memory
 * count): a red test that says nothing about the code. Tests of timeouts set their own.
 */
export const PATIENT_TIMEOUT_MS = 10_000;
