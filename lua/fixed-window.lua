--[[
  Fixed window: one counter per window, windows aligned on the epoch (every key's window turns over at the same
  instants). INCRBY counts; the expiry is set once, when a window's first request creates the counter.

  The counter holds the window's end and the count in one integer, end + count (end in µs is a multiple of the
  window and count < window in µs, so both read back exactly). That keeps the key an int-encoded string, the
  cheapest Redis value, and lets an injected clock, not Redis's key expiry, decide when a window is over.
  A consume counts first (fw_take): INCRBY's reply is the value after, so an admitted request is one command, not
  a GET and an INCRBY; a refused one gives its units back in the same script, so nobody sees them and the state is
  as if it had only been read (its twin, lib/algorithms/fixed-window.memory.ts, reads first: the same decisions).
  The key's name carries the window (key.builder.ts): a live change of it starts afresh; a lowered limit reads
  the count as it is (0 remaining until the window ends).

  Called through the driver (lua/includes/driver.lua), which decides a batch of calls and holds the full KEYS/ARGV
  contract; what this algorithm's rules carry there:
  state key   counter: window end (µs since the epoch) + units admitted in the window
  lockout key (only for a rule with a lockout) a string holding the instant (µs) the lockout started
  definition  'fw', limit, window (ms), lockout (ms, 0 = none)
  call cost   units the request takes (integer, 1..limit; 0 for a peek)

  check returns: allowed, remaining, reset after (µs), retry after (µs); the driver replies them per rule
]]
--- @include "prelude"

-- A window's key expires at the window's end, on Redis's clock. With a clock of the app's own (RedisStore's `clock`,
-- as tests inject; the driver's ARGV[1]), decisions follow that clock and Redis's does not: a key made a few ms
-- before its window ends could expire before a call made moments later in real time, at the same instant of that
-- clock, losing its count. Such keys live a second longer: the value names its window, so outliving it changes no
-- decision. (app_clock: see the prelude.)
local FW_SLACK_MS = 1000

-- Returns the current window's end (µs), its count so far, and whether the stored value is another window's
-- (or missing), in which case the count starts from 0.
-- `%`, not math.fmod: an operator of the VM instead of a call into C, and exact here (a - floor(a / b) * b, whose
-- quotient cannot round across an integer for integers below 2^53). The twin has the same numbers (floorTo).
local function fw_read(r, now)
  local window_end = now - now % r.window + r.window
  local value = get_number(r.key)
  if value then
    local count = value - window_end
    -- The count is below the window in µs (define-rule.ts): a value of this window lies in [end, end + window).
    if count >= 0 and count < r.window then
      return window_end, count, false
    end
  end
  return window_end, 0, true
end

-- A consume of `cost` > 0 units, counted first. A GET's reply, a string of 16 digits read back as a number, cost
-- Redis more than the INCRBY itself: per decision of a batch, 22,400 instructions with the GET, 17,400 without
-- (callgrind). A refusal is an INCRBY and a DECRBY (or a DEL of the key it created), about what a GET cost.
local function fw_take(r, now, cost)
  local window_end = now - now % r.window + r.window
  local value = cost == 1 and rcall('INCR', r.key) or rcall('INCRBY', r.key, cost)
  local count = value - cost - window_end
  if count >= 0 and count < r.window then
    if count + cost <= r.limit then
      return true, r.limit - count - cost, window_end - now, 0
    end
    rcall('DECRBY', r.key, cost)
    return false, r.limit - count, window_end - now, window_end - now
  end
  -- The key was missing (INCRBY made it `cost`) or held another window: this window starts empty.
  if cost <= r.limit then
    rcall('SET', r.key, int(window_end + cost), 'PX', ceil_ms(window_end - now) + (app_clock and FW_SLACK_MS or 0))
    return true, r.limit - cost, window_end - now, 0
  end
  if value == cost then
    rcall('DEL', r.key)
  else
    rcall('DECRBY', r.key, cost)
  end
  -- Refused: the next window starts empty, and cost <= limit.
  return false, r.limit, window_end - now, window_end - now
end

ALGORITHMS['fw'] = {
  -- A run of one key's calls is decided at once (the driver's decide_run).
  runs = true,
  check = function(r, now, cost, apply)
    if apply and cost > 0 then
      return fw_take(r, now, cost)
    end
    local window_end, count, fresh = fw_read(r, now)
    if count + cost <= r.limit then
      -- A consume of 0 units (fw_take counts the others: the stores send none, the twin has the same branch).
      if apply and fresh then
        rcall('SET', r.key, int(window_end), 'PX', ceil_ms(window_end - now) + (app_clock and FW_SLACK_MS or 0))
      end
      if cost == 0 and count == 0 then
        return true, r.limit, 0, 0
      end
      return true, r.limit - count - cost, window_end - now, 0
    end
    -- Refused: the next window starts empty, and cost <= limit.
    return false, r.limit - count, window_end - now, window_end - now
  end,
  -- Units taken ahead (a local budget) count in this window: they must be spent, or given back, before it ends.
  lease_end = function(r, now)
    return now - now % r.window + r.window
  end,
  refund = function(r, now, cost)
    local _, count = fw_read(r, now)
    if count > 0 then
      rcall('DECRBY', r.key, min(cost, count))
    end
  end,
}
--- @include "driver"
