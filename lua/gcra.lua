--[[
  GCRA, the generic cell rate algorithm, with the semantics of redis-cell's
  `CL.THROTTLE key max_burst count period [quantity]`, in plain Lua so no Redis module is needed.
  One key per limiter holds the theoretical arrival time (TAT). emission interval T = period / count µs, exact at
  any rate (a whole number of units of 1/d µs, see the prelude), delay tolerance tau = T x (max_burst + 1).
  A request of quantity q passes when max(TAT, now) + q·T - tau <= now. Quantity 0 only looks (nothing is
  written, unlike redis-cell, which rewrites the same TAT). The key's name carries T (key.builder.ts), so a
  change of it starts afresh; a lowered burst reads the TAT clamped to now + tau.

  Called through the driver (lua/includes/driver.lua), which decides a batch of calls and holds the full KEYS/ARGV
  contract; what this algorithm's rules carry there:
  state key   TAT (µs since the epoch), "F" or "F:r" = F + r/d µs; expires at the end of that second (SLOT in
              lua/includes/exact.lua)
  lockout key (only for a rule with a lockout) a string holding the instant (µs) the lockout started
  definition  'gcra', count (per period), period (ms), lockout (ms, 0 = none), max_burst + 1
  call cost   quantity (integer, 0..max_burst + 1)

  check returns: allowed, remaining, reset after (µs), retry after (µs); retry after is -1 when the quantity can never pass, as redis-cell
]]
--- @include "prelude"
--- @include "exact"

ALGORITHMS['gcra'] = {
  -- A run of one key's calls is decided at once (the driver's decide_run).
  runs = reset_behind,
  -- Reads its parameter (max_burst + 1) from ARGV; see the driver.
  param = true,
  -- T = period / count, as units of 1/d µs (prepare_interval, lua/includes/exact.lua).
  prepare = function(r)
    prepare_interval(r, r.limit)
  end,
  check = function(r, now, quantity, apply)
    -- Everything in units of 1/d µs (see the prelude): T, tau, and the TAT as its distance from now.
    local t, d = r.interval, r.d
    local tau = t * r.param
    -- At most tau, so that a lowered burst applies at once.
    local tat, stored = units_until(r.key, now, d, tau)
    local increment = t * quantity
    local new_tat = tat + increment
    local allowed, ttl, retry = true, new_tat, 0
    -- Refused when now < new TAT - tau.
    if new_tat > tau then
      allowed, ttl, retry = false, tat, -1
      if increment <= tau then
        retry = ceil_div(new_tat - tau, d)
      end
    elseif apply and quantity > 0 then
      advance_instant(r, now, stored, new_tat)
    end
    -- redis-cell: remaining = (tau - ttl) / T, truncated toward zero, and 0 once it would be negative.
    local remaining = 0
    if tau > ttl then
      remaining = idiv(tau - ttl, t)
    end
    -- The fifth value, the TAT after (units of 1/d µs), gives the resets of a run's calls (see runs).
    return allowed, remaining, ceil_div(ttl, d), retry, new_tat
  end,
  refund = function(r, now, quantity)
    local t, d = r.interval, r.d
    local tat = units_until(r.key, now, d, t * r.param) - quantity * t
    if tat <= 0 then
      rcall('DEL', r.key)
    else
      set_instant(r.key, now, tat, d)
    end
  end,
}
--- @include "driver"
