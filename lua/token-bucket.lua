--[[
  Token bucket: `limit` tokens of capacity, refilled continuously at `refill` tokens per window; a request of
  cost N takes N tokens or waits.

  Tokens and their timestamp are folded into one value: the instant the bucket will be full again. Tokens at
  any time follow from it (capacity - (full_at - now) / interval), and one int-encoded string is the cheapest
  Redis value. The interval, window / refill µs, is exact at any rate: a whole number of units of 1/d µs (see
  the prelude), so all arithmetic is on integers and the memory store computes the same numbers.
  The key's name carries the interval (key.builder.ts), so a change of it starts afresh; a lowered capacity
  reads the stored debt clamped to the new capacity.

  Called through the driver (lua/includes/driver.lua), which decides a batch of calls and holds the full KEYS/ARGV
  contract; what this algorithm's rules carry there:
  state key   bucket: the instant (µs since the epoch) it is full again, "F" or "F:r" = F + r/d µs; expires at the
              end of that second (SLOT in lua/includes/exact.lua)
  lockout key (only for a rule with a lockout) a string holding the instant (µs) the lockout started
  definition  'tb', capacity (tokens), window (ms), lockout (ms, 0 = none), refill (tokens per window)
  call cost   tokens the request takes (integer, 1..capacity; 0 for a peek)

  check returns: allowed, remaining, reset after (µs), retry after (µs); the driver replies them per rule
]]
--- @include "prelude"
--- @include "exact"

ALGORITHMS['tb'] = {
  -- A run of one key's calls is decided at once (the driver's decide_run).
  runs = reset_behind,
  -- Reads its parameter (refill) from ARGV; see the driver.
  param = true,
  -- A token every window / refill µs, as units of 1/d µs (prepare_interval, lua/includes/exact.lua).
  prepare = function(r)
    prepare_interval(r, r.param)
  end,
  check = function(r, now, cost, apply)
    -- A token every `interval` units of 1/d µs; the debt is how long until the bucket is full, in those units.
    local interval, d = r.interval, r.d
    local capacity = r.limit * interval
    local debt, stored = units_until(r.key, now, d, capacity)
    local after = debt + cost * interval
    if after <= capacity then
      if apply then
        advance_instant(r, now, stored, after)
      end
      -- The fifth value, the debt after (units of 1/d µs), gives the resets of a run's calls (see runs).
      return true, idiv(capacity - after, interval), ceil_div(after, d), 0, after
    end
    return false, idiv(capacity - debt, interval), ceil_div(debt, d), ceil_div(after - capacity, d)
  end,
  refund = function(r, now, cost)
    local interval, d = r.interval, r.d
    local debt = units_until(r.key, now, d, r.limit * interval) - cost * interval
    if debt <= 0 then
      rcall('DEL', r.key)
    else
      set_instant(r.key, now, debt, d)
    end
  end,
}
--- @include "driver"
