-- Shared by token bucket and GCRA only (included after the prelude): the other scripts do not build these
-- functions, since a script's every function is made again on each call.
-- Exact arithmetic for token bucket and GCRA (twin: lib/algorithms/exact-instant.ts). An interval of
-- window / rate µs is a whole number of units of 1/d µs, d = rate / gcd(window, rate), so all comparisons are
-- on integers at any rate. A stored instant is F µs plus r/d µs (0 <= r < d): the integer F when r = 0, else "F:r".

-- floor(a / b) for integers a >= 0, b > 0, exact even where the float quotient rounds up to the next integer.
-- `q - q % 1` is floor(q) by the VM's own `%` (see ceil_ms): a decision divides several times, and each
-- math.floor was a call into C.
local function idiv(a, b)
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

-- window / rate µs as units of 1/d µs: returns units, d (coprime integers).
local function reduced_interval(window, rate)
  local a, b = window, rate
  while b ~= 0 do
    -- `%` is exact for these integers (below 2^53; see fixed-window.lua), and no call into C.
    a, b = b, a % b
  end
  return window / a, rate / a
end

-- Stores the instant `units` units of 1/d µs after now, expiring then (rounded up to the ms).
local function set_instant(key, now, units, d)
  local us = idiv(units, d)
  local fraction = units - us * d
  local value = int(now + us)
  if fraction > 0 then
    value = value .. ':' .. int(fraction)
  end
  rcall('SET', key, value, 'PX', ceil_ms(ceil_div(units, d)))
end

-- How far the instant stored at `key` is ahead of now, in units of 1/d µs: 0 when passed or missing, at most
-- `cap`. An instant further ahead (a rule whose capacity was lowered) is moved back to now + cap, so that the
-- lowered capacity applies at once and time runs from there: a clamp on read alone would never come down.
local function units_until(key, now, d, cap)
  local raw = rcall('GET', key)
  if not raw then
    return 0
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
