-- Shared head of every rate-limit script: the table the driver dispatches on, and number helpers.
-- Each algorithm registers { check = fn(rule, now, cost, apply), refund = fn(rule, now, cost) } in ALGORITHMS,
-- with `param = true` when its rules carry a parameter in ARGV (segments, refill, burst), and optionally
-- prepare = fn(rule), run once per rule definition of a batch, for what is worked out from the rule alone.
-- check returns: allowed (boolean), remaining, reset_after (µs), retry_after (µs; -1 = never, for GCRA).
local ALGORITHMS = {}

-- The library functions every decision calls, as locals: a global (and `math.`/`redis.` field) lookup per use
-- was a measurable part of a batch's script time.
local rcall, fmod, floor, ceil, max, min = redis.call, math.fmod, math.floor, math.ceil, math.max, math.min

-- Integers are written with '%.0f': Lua's tostring would print 1.7e+15, which Redis cannot keep int-encoded.
local function int(x)
  return string.format('%.0f', x)
end

-- Reported waits are rounded up, so that waiting the reported time is always enough.
local function ceil_ms(us)
  if us <= 0 then
    return 0
  end
  return ceil(us / 1000)
end

-- GET as a number, or nil when the key is missing.
local function get_number(key)
  local raw = rcall('GET', key)
  if raw then
    return tonumber(raw)
  end
  return nil
end
