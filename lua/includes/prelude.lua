-- Shared head of every rate-limit script: the table the driver dispatches on, and number helpers.
-- Each algorithm registers { check = fn(rule, now, cost, apply), refund = fn(rule, now, cost) } in ALGORITHMS.
-- check returns: allowed (boolean), remaining, reset_after (µs), retry_after (µs; -1 = never, for GCRA).
local ALGORITHMS = {}

-- Integers are written with '%.0f': Lua's tostring would print 1.7e+15, which Redis cannot keep int-encoded.
local function int(x)
  return string.format('%.0f', x)
end

-- Reported waits are rounded up, so that waiting the reported time is always enough.
local function ceil_ms(us)
  if us <= 0 then
    return 0
  end
  return math.ceil(us / 1000)
end

-- GET as a number, or nil when the key is missing.
local function get_number(key)
  local raw = redis.call('GET', key)
  if raw then
    return tonumber(raw)
  end
  return nil
end
