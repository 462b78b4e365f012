--[[
  GCRA, the generic cell rate algorithm, with the semantics of redis-cell's
  `CL.THROTTLE key max_burst count period [quantity]`, in plain Lua so no Redis module is needed.
  One key per limiter holds the theoretical arrival time (TAT). emission interval T = period / count µs, exact at
  any rate (a whole number of units of 1/d µs, see the prelude), delay tolerance tau = T x (max_burst + 1).
  A request of quantity q passes when max(TAT, now) + q·T - tau <= now. Quantity 0 only looks (nothing is
  written, unlike redis-cell, which rewrites the same TAT). The key's name carries T (key.builder.ts), so a
  change of it starts afresh; a lowered burst reads the TAT clamped to now + tau.

  KEYS[2i-1]  TAT of rule i (µs since the epoch), "F" or "F:r" = F + r/d µs
  KEYS[2i]    lockout of rule i: a string holding the instant (µs) the lockout started
  ARGV[1]     now in µs since the epoch, or '' to use Redis's TIME
  ARGV[2]     'consume' | 'peek' | 'refund'
  ARGV[3]     deadline in µs since the epoch (Redis's clock), or '' for none: past it nothing is written
  ARGV[4+6(i-1) .. 9+6(i-1)]  rule i: 'gcra', count (per period), period (ms), lockout (ms, 0 = none),
              max_burst + 1, quantity (integer, 0..max_burst + 1)

  Reply: { allowed by all (0/1), then per rule: allowed (0/1), remaining, reset after (ms), retry after (ms,
  -1 when the quantity can never pass, as redis-cell) }   ('refund' replies { 1 }; a command past its deadline replies { -1 })
]]
--- @include "prelude"

ALGORITHMS['gcra'] = {
  check = function(r, now, quantity, apply)
    -- Everything in units of 1/d µs (see the prelude): T, tau, and the TAT as its distance from now.
    local t, d = reduced_interval(r.window, r.limit)
    local tau = t * r.param
    -- At most tau, so that a lowered burst applies at once.
    local tat = units_until(r.key, now, d, tau)
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
      set_instant(r.key, now, new_tat, d)
    end
    -- redis-cell: remaining = (tau - ttl) / T, truncated toward zero, and 0 once it would be negative.
    local remaining = 0
    if tau > ttl then
      remaining = idiv(tau - ttl, t)
    end
    return allowed, remaining, ceil_div(ttl, d), retry
  end,
  refund = function(r, now, quantity)
    local t, d = reduced_interval(r.window, r.limit)
    local tat = units_until(r.key, now, d, t * r.param) - quantity * t
    if tat <= 0 then
      redis.call('DEL', r.key)
    else
      set_instant(r.key, now, tat, d)
    end
  end,
}
--- @include "driver"
