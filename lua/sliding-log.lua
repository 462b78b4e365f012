--[[
  Sliding log: an exact sliding window. Every admitted unit is one entry in a sorted set scored by its time;
  a request of cost N passes when the entries of the last `window` leave N free slots. Memory grows with the limit.

  Fixes of the seed articles' script: the check comes before anything is recorded, so a refused request records
  nothing; members are per-key sequence numbers, unique even for requests in the same microsecond; times are in
  microseconds and the key's expiry, in milliseconds, is exactly the window.
  Timestamps read correctly under any live change of window or limit (a longer window sees only the entries the
  old one still held).

  Called through the driver (lua/includes/driver.lua), which decides a batch of calls and holds the full KEYS/ARGV
  contract; what this algorithm's rules carry there:
  state key   sorted set: score = time of a unit (µs since the epoch), member = sequence number
  lockout key (only for a rule with a lockout) a string holding the instant (µs) the lockout started
  definition  'sl', limit (integer), window (ms), lockout (ms, 0 = none)
  call cost   units the request takes (integer, 1..limit; 0 for a peek)

  check returns: allowed, remaining, reset after (µs), retry after (µs); the driver replies them per rule
]]
--- @include "prelude"

-- Members sort like their sequence numbers, because ZRANGE breaks score ties by member: a length prefix
-- ('a' = 1 digit, 'b' = 2 digits, ...) makes lexicographic order numeric order.
local function sl_member(seq)
  local digits = int(seq)
  return string.char(96 + #digits) .. digits
end

ALGORITHMS['sl'] = {
  -- A run of one key's calls is decided at once (the driver's decide_run): one charge of all the units admitted
  -- adds the same members, at the same score, as the calls one by one.
  runs = true,
  check = function(r, now, cost, apply)
    -- An entry at t is inside the window while t > now - window.
    -- As a string of its digits: Redis formats a number argument with '%.17g', slower than '%d' for 16 digits.
    rcall('ZREMRANGEBYSCORE', r.key, '-inf', int(now - r.window))
    local count = rcall('ZCARD', r.key)
    -- '-1' as strings: Redis formats a number argument with '%.17g' on every call (about 150 ns each).
    local newest = rcall('ZRANGE', r.key, '-1', '-1', 'WITHSCORES')
    -- A clock that steps back must not put entries before the newest one: sequence numbers would repeat.
    local at = now
    if newest[1] then
      at = max(now, newest[2] + 0)
    end
    if count + cost <= r.limit then
      if apply then
        local seq = newest[1] and string.sub(newest[1], 2) + 0 or 0
        local score = int(at)
        if cost == 1 then
          rcall('ZADD', r.key, score, sl_member(seq + 1))
        else
          -- ZADD in chunks: unpack() has a bounded stack.
          for first = 1, cost, 1000 do
            local args = {}
            for i = first, min(cost, first + 999) do
              args[#args + 1] = score
              args[#args + 1] = sl_member(seq + i)
            end
            rcall('ZADD', r.key, unpack(args))
          end
        end
        rcall('PEXPIRE', r.key, ceil_ms(at + r.window - now))
      end
      if cost == 0 then
        -- A look, not a request: the key is full again when its newest entry leaves.
        return true, r.limit - count, newest[1] and (newest[2] + r.window - now) or 0, 0
      end
      return true, r.limit - count - cost, at + r.window - now, 0
    end
    -- More than the limit in force (an override's, cut below the cost): no wait lets it through.
    if cost > r.limit then
      return false, r.limit - count, newest[1] and (newest[2] + r.window - now) or 0, -1
    end
    -- Refused: wait until the oldest (count + cost - limit) entries have left the window.
    local rank = count + cost - r.limit - 1
    local freeing = rcall('ZRANGE', r.key, rank, rank, 'WITHSCORES')
    return false, r.limit - count, newest[2] + r.window - now, freeing[2] + r.window - now
  end,
  refund = function(r, now, cost)
    -- The newest entries are the ones the refunded request added.
    rcall('ZPOPMAX', r.key, cost)
  end,
}
--- @include "driver"
