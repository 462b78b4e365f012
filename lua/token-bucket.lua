--[[
  Token bucket: `limit` tokens of capacity, refilled continuously at `refill` tokens per window; a request of
  cost N takes N tokens or waits.

  Tokens and their timestamp are folded into one integer: the instant the bucket will be full again. Tokens at
  any time follow from it (capacity - (full_at - now) / interval), and one int-encoded string is the cheapest
  Redis value. interval = floor(window / refill) µs per token, so all arithmetic is on integers and the memory
  store computes the same numbers.

  KEYS[2i-1]  bucket of rule i: the instant (µs since the epoch) it is full again
  KEYS[2i]    lockout of rule i: a string holding the instant (µs) the lockout ends
  ARGV[1]     now in µs since the epoch, or '' to use Redis's TIME
  ARGV[2]     'consume' | 'peek' | 'refund'
  ARGV[3]     deadline in µs since the epoch (Redis's clock), or '' for none: past it nothing is written
  ARGV[4+6(i-1) .. 9+6(i-1)]  rule i: 'tb', capacity (tokens), window (ms), lockout (ms, 0 = none), refill (tokens per window),
              cost: tokens the request takes (integer, 1..capacity; 0 for a peek)

  Reply: { allowed by all (0/1), then per rule: allowed (0/1), remaining, reset after (ms), retry after (ms) }
  ('refund' replies { 1 }; a command past its deadline replies { -1 })
]]
--- @include "prelude"

ALGORITHMS['tb'] = {
  check = function(r, now, cost, apply)
    local interval = math.floor(r.window / r.param)
    local capacity = r.limit * interval
    -- debt: how long until the bucket is full, i.e. the missing tokens times the interval.
    local debt = math.max(0, (get_number(r.key) or now) - now)
    local after = debt + cost * interval
    if after <= capacity then
      if apply then
        redis.call('SET', r.key, int(now + after), 'PX', ceil_ms(after))
      end
      return true, math.floor((capacity - after) / interval), after, 0
    end
    return false, math.floor((capacity - debt) / interval), debt, after - capacity
  end,
  refund = function(r, now, cost)
    local full_at = get_number(r.key)
    if not full_at then
      return
    end
    local debt = full_at - now - cost * math.floor(r.window / r.param)
    if debt <= 0 then
      redis.call('DEL', r.key)
    else
      redis.call('SET', r.key, int(now + debt), 'PX', ceil_ms(debt))
    end
  end,
}
--- @include "driver"
