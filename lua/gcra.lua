--[[
  GCRA, the generic cell rate algorithm, with the semantics of redis-cell's
  `CL.THROTTLE key max_burst count period [quantity]`, in plain Lua so no Redis module is needed.
  One key per limiter holds the theoretical arrival time (TAT). emission interval T = floor(period / count) µs,
  delay tolerance tau = T x (max_burst + 1). A request of quantity q passes when max(TAT, now) + q·T - tau <= now.
  Quantity 0 only looks (nothing is written, unlike redis-cell, which rewrites the same TAT).

  KEYS[2i-1]  TAT of rule i (µs since the epoch)
  KEYS[2i]    lockout of rule i: a string holding the instant (µs) the lockout ends
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
    local t = math.floor(r.window / r.limit)
    local tau = t * r.param
    local tat = math.max(get_number(r.key) or now, now)
    local increment = t * quantity
    local new_tat = tat + increment
    local allow_at = new_tat - tau
    local allowed, ttl, retry = true, new_tat - now, 0
    if now < allow_at then
      allowed, ttl, retry = false, tat - now, -1
      if increment <= tau then
        retry = allow_at - now
      end
    elseif apply and quantity > 0 then
      redis.call('SET', r.key, int(new_tat), 'PX', ceil_ms(ttl))
    end
    -- redis-cell: remaining = (tau - ttl) / T, truncated toward zero, and 0 once it would be negative.
    local remaining = 0
    local next_free = tau - ttl
    if next_free > 0 then
      remaining = math.floor(next_free / t)
    end
    return allowed, remaining, ttl, retry
  end,
  refund = function(r, now, quantity)
    local tat = get_number(r.key)
    if not tat then
      return
    end
    tat = tat - quantity * math.floor(r.window / r.limit)
    if tat <= now then
      redis.call('DEL', r.key)
    else
      redis.call('SET', r.key, int(tat), 'PX', ceil_ms(tat - now))
    end
  end,
}
--- @include "driver"
