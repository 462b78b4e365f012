-- Shared head of every rate-limit script: the table the driver dispatches on, and number helpers.
-- Each algorithm registers { check = fn(rule, now, cost, apply), refund = fn(rule, now, cost) } in ALGORITHMS,
-- with `param = true` when its rules carry a parameter in ARGV (segments, refill, burst), and optionally
-- prepare = fn(rule), run once per rule definition of a batch, for what is worked out from the rule alone, and
-- lease_end = fn(rule, now), for an algorithm whose units taken ahead count only until an instant (see the driver's 'l'),
-- and `runs` for one whose check admits while the units left cover the cost and leaves the state as it was when it
-- refuses: the driver then decides a run of one key's calls with one charge of all their units, or when they do not
-- fit, a check for the first, one charge for the rest admitted and one check for those refused (decide_run). runs = true when every call admitted at one instant after the first reports
-- the same reset; else runs = fn(rule, units, behind), the reset of an admitted call `behind` units before the last,
-- from `units`, the fifth value check returns on an admission.
-- check returns: allowed (boolean), remaining, reset_after (µs), retry_after (µs; -1 = never, for GCRA).
local ALGORITHMS = {}

-- The library functions every decision calls, as locals: a global (and `math.`/`redis.` field) lookup per use
-- was a measurable part of a batch's script time. Bound by the driver at its first call (see decide): a function
-- library being loaded cannot read them yet.
local rcall, floor, max, min, format
-- Whether this call's decisions are on the app's clock (the driver's ARGV[1]), not Redis's TIME: set by the driver
-- on every call.
local app_clock = false

-- Integers are written with string.format: Lua's tostring would print 1.7e+15, which Redis cannot keep
-- int-encoded. '%d' (the number cast to a C long, exact below 2^53) took about half the time of '%.0f' (180 against
-- 380 ns in Redis's Lua), which a token bucket, GCRA or sliding window decision pays for every write; '%.0f' stays
-- for a value that is not a whole number, which it rounds where '%d' would truncate.
local function int(x)
  if x % 1 == 0 then
    return format('%d', x)
  end
  return format('%.0f', x)
end

-- µs → ms, rounded up, for the expiries the scripts set (PX, PEXPIRE): a key outlives its state, never the reverse.
-- `%` is an operator of the VM, where math.ceil is a call into C (ms - ms % 1 is exact: the floor of ms). Reported
-- waits go out in µs, rounded by the caller (ceilMs in lib/stores/store.plan.ts, which the memory store shares).
local function ceil_ms(us)
  if us <= 0 then
    return 0
  end
  local ms = us / 1000
  local fraction = ms % 1
  if fraction == 0 then
    return ms
  end
  return ms - fraction + 1
end

-- GET as a number, or nil when the key is missing. A string of digits that this code wrote, or that the caller sent
-- in ARGV, is read by arithmetic (`raw + 0`), not tonumber: the same parse, without a call into C, which in Redis's
-- Lua costs about as much as the parse itself. tonumber stays where a string may not be a number.
local function get_number(key)
  local raw = rcall('GET', key)
  if raw then
    return raw + 0
  end
  return nil
end
