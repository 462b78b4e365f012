/**
 * A source of time in milliseconds since the epoch (fractions allowed). Passing one to a store makes it decide
 * on that time instead of its own: Redis's `TIME` for the Redis store, a monotonic clock for the memory store.
 */
export type Clock = () => number;
