-- Shared by token bucket and GCRA only (included after the prelude): the other scripts do not build these
-- functions, since a script's every function is made again on each call.
-- Exact arithmetic for token bucket and GCRA (twin: lib/algorithms/exact-instant.ts). An interval of
-- window / rate µs is a whole number of units of 1/d µs, d = rate / gcd(window, rate), so all comparisons are
-- on integers at any rate. A stored instant is F µs plus r/d µs (0 <= r < d): the integer F when r = 0, else "F:r".

-- floor(a / b) for integers a >= 0, b > 0, exact even where the float quotient rounds up to the next integer.
-- `q - q % 1` is floor(q) by the VM's own `%` (see ceil_ms): a decision divides several times, and each
-- math.floor was a call into C.
local function idiv(a, b)
  -- A whole-µs interval (d = 1) divides by 1 on every decision.
  if b == 1 then
    return a
  end
  local q = a / b
  q = q - q % 1
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

-- ceil(a / b) for integers a >= 0, b > 0.
local function ceil_div(a, b)
  local q = idiv(a, b)
  if q * b < a then
    return q + 1
  end
  return q
end

-- The reset (µs) of a call admitted `behind` units before the last of a run on one key (the driver's decide_run), from
-- `units`, the instant check returned for the last (the bucket's debt, the GCRA's TAT, units of 1/r.d µs): each unit
-- less is one interval less.
local function reset_behind(r, units, behind)
  return ceil_div(units - behind * r.interval, r.d)
end

-- Rule `r`'s interval, window / rate µs, as r.interval units of 1/r.d µs (coprime integers). Once per definition in
-- a batch: a gcd loop, not redone per decision. r.step, the string INCRBY sends for a one-unit move, is made by
-- advance_instant when first needed: a lone call seldom needs it, and its format was 2,100 of a lone token-bucket
-- call's 105,000 Redis instructions.
local function prepare_interval(r, rate)
  local a, b = r.window, rate
  while b ~= 0 do
    -- `%` is exact for these integers (below 2^53; see fixed-window.lua), and no call into C.
    a, b = b, a % b
  end
  r.interval, r.d, r.step = r.window / a, rate / a, false
end

-- A key's expiry is the end of the whole second its instant falls in (a multiple of SLOT µs since the epoch), not
-- the instant itself: then moving the instant within that second needs no new expiry, and a whole-µs instant moves by
-- INCRBY (advance_instant): in Redis 7.0's Lua, a SET with PX took about 12,500 instructions, INCRBY 3,500 (callgrind,
-- a loop of calls in one script). A key outlives its state by less than a second.
local SLOT = 1000000

-- Stores the instant `units` units of 1/d µs after now, expiring at the end of its second (see SLOT).
local function set_instant(key, now, units, d)
  local us = idiv(units, d)
  local at = now + us
  local value = int(at)
  if units > us * d then
    value = value .. ':' .. int(units - us * d)
    at = at + 1
  end
  rcall('SET', key, value, 'PX', int(ceil_ms(at - at % SLOT + SLOT - now)))
end

-- How far the instant stored at `key` is ahead of now, in units of 1/d µs: 0 when passed or missing, at most
-- `cap`. An instant further ahead (a rule whose capacity was lowered) is moved back to now + cap, so that the
-- lowered capacity applies at once and time runs from there: a clamp on read alone would never come down.
-- Also returns, for a whole-µs instant (d = 1) that is stored, the instant stored (µs), for advance_instant.
local function units_until(key, now, d, cap)
  local raw = rcall('GET', key)
  if not raw then
    return 0
  end
  if d == 1 then
    -- Whole µs: the value is a plain integer (the key's name carries d, key.builder.ts), read by arithmetic.
    local at = raw + 0
    local us = at - now
    if us <= 0 then
      return 0, at
    elseif us <= cap then
      return us, at
    end
    set_instant(key, now, cap, 1)
    return cap, now + cap
  end
  local at, fraction = raw, 0
  local colon = string.find(raw, ':', 1, true)
  if colon then
    at, fraction = string.sub(raw, 1, colon - 1), string.sub(raw, colon + 1) + 0
  end
  local us = at - now
  if us < 0 then
    return 0
  end
  -- Compared in whole µs first, so that an instant far ahead is never multiplied by d.
  if us < ceil_div(cap, d) and us * d + fraction <= cap then
    return us * d + fraction
  end
  set_instant(key, now, cap, d)
  return cap
end

-- Stores in rule `r`'s key the instant `units` units of 1/d µs after now. `stored` is what units_until returned with
-- them: the whole-µs instant the key holds, passed or not. When the new instant falls in the same second as that one,
-- the key's expiry already covers it (see SLOT), and INCRBY moves it there; any other is written anew.
local function advance_instant(r, now, stored, units)
  if stored then
    local at = now + units
    if at - at % SLOT == stored - stored % SLOT then
      local move = at - stored
      if move ~= r.interval then
        rcall('INCRBY', r.key, int(move))
        return
      end
      -- A request's move past an instant ahead of now (cost or quantity 1) goes as a string made once per batch.
      local step = r.step
      if not step then
        step = int(move)
        r.step = step
      end
      rcall('INCRBY', r.key, step)
      return
    end
  end
  set_instant(r.key, now, units, r.d)
end
