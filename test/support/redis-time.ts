import type { Redis } from 'ioredis';

/**
 * Redis's own clock, and where a key's expiry may lie on it. Tests that check an expiry read TIME before the call
 * that set it and after, and the expiry itself as an instant (PEXPIRETIME): that brackets the instant Redis took as
 * "now" by what was measured on Redis's clock, however long the machine took between the calls, where a PTTL read
 * afterwards drifts by every ms the test was descheduled.
 */

/** TIME's reply ([seconds, µs]) as µs since the epoch. */
export const timeUs = ([seconds, micros]: readonly (string | number)[]): number => Number(seconds) * 1_000_000 + Number(micros);

/** Redis's clock now, in µs since the epoch (one TIME). */
export async function redisTimeUs(client: Redis): Promise<number> {
  return timeUs(await client.time());
}

/** Runs `call` between two reads of Redis's clock: its result and the µs the call lay between, on that clock. */
export async function onRedisClock<T>(client: Redis, call: () => Promise<T>): Promise<{ result: T; beforeUs: number; afterUs: number }> {
  const beforeUs = await redisTimeUs(client);
  const result = await call();
  return { result, beforeUs, afterUs: await redisTimeUs(client) };
}

/**
 * The expiry (ms since the epoch, PEXPIRETIME) of a key written with `PX ms` (or PEXPIRE) by a call made between
 * beforeUs and afterUs on Redis's clock lies in [the ms of beforeUs + ms, the ms of afterUs + ms]: Redis adds `ms` to
 * its clock in whole ms when it runs the command, an instant within the call.
 */
export function pxExpiryRange(ms: number, beforeUs: number, afterUs: number): { earliest: number; latest: number } {
  return { earliest: Math.floor(beforeUs / 1000) + ms, latest: Math.floor(afterUs / 1000) + ms };
}

/** The expiry against its range, as `{ expiry, earliest, latest, within }`: a failed `within: true` shows all four. */
export function expiryWithin(expiry: number, range: { earliest: number; latest: number }): { expiry: number; earliest: number; latest: number; within: boolean } {
  return { expiry, ...range, within: expiry >= range.earliest && expiry <= range.latest };
}
