-- Shared tail of every rate-limit script: reads the rules from KEYS/ARGV, applies the lockouts, and decides
-- all-or-nothing: with several rules, each is checked first and state is written only if all admit.
local now
if ARGV[1] == '' then
  -- Redis's own clock, so that app hosts whose clocks disagree still share one window.
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[1])
end
local op = ARGV[2]
-- A caller that timed out has already decided without us; a command that reaches Redis after that (a stalled
-- server, a full socket buffer) must not count what nobody is waiting for.
local deadline = tonumber(ARGV[3])
if deadline and now > deadline then
  return { -1 }
end
local rules = {}
for i = 1, #KEYS / 2 do
  local a = 3 + (i - 1) * 6
  rules[i] = {
    algorithm = ALGORITHMS[ARGV[a + 1]],
    limit = tonumber(ARGV[a + 2]),
    window = tonumber(ARGV[a + 3]) * 1000,
    block = tonumber(ARGV[a + 4]) * 1000,
    param = tonumber(ARGV[a + 5]),
    cost = tonumber(ARGV[a + 6]),
    key = KEYS[2 * i - 1],
    block_key = KEYS[2 * i],
  }
end

if op == 'refund' then
  for _, r in ipairs(rules) do
    r.algorithm.refund(r, now, r.cost)
  end
  return { 1 }
end

-- A single rule can write as it checks; several must all be checked before any writes.
local write_now = op == 'consume' and #rules == 1
local decisions = {}
local all = true
for i, r in ipairs(rules) do
  local d
  if r.block > 0 then
    -- The lockout key holds when it started, so the current rule's length applies (a shortened one at once); at
    -- most that length from now, even if the clock stepped back.
    local started = get_number(r.block_key)
    local left = started and math.min(started + r.block - now, r.block)
    if left and left > 0 then
      -- The algorithm is asked too, writing nothing: the wait reported must also be enough to pass it then.
      local own = { r.algorithm.check(r, now, r.cost, false) }
      if own[1] then
        -- It would pass: report its state as it is, not as it would be after a charge that is not made.
        own = { r.algorithm.check(r, now, 0, false) }
      end
      d = { false, 0, math.max(own[3], left), own[4] < 0 and -1 or math.max(own[4], left), blocked = true }
    end
  end
  if not d then
    d = { r.algorithm.check(r, now, r.cost, write_now) }
  end
  all = all and d[1]
  decisions[i] = d
end

if op == 'consume' then
  if all and not write_now then
    -- Each state key appears once (the stores merge repeated entries into one rule), so this check sees the state
    -- the first pass saw and admits again: `all` stays true of what is charged.
    for i, r in ipairs(rules) do
      decisions[i] = { r.algorithm.check(r, now, r.cost, true) }
    end
  elseif not all then
    for i, r in ipairs(rules) do
      local d = decisions[i]
      if d[1] and not write_now then
        -- Nothing was charged: report this rule's state as it is, not as it would have been after the charge.
        d = { r.algorithm.check(r, now, 0, false) }
        decisions[i] = d
      elseif not d[1] and r.block > 0 and not d.blocked then
        redis.call('SET', r.block_key, int(now), 'PX', r.block / 1000)
        -- The wait is the longer of the lockout and the algorithm's own: waiting the lockout alone could be
        -- refused again, and start another lockout.
        d[3] = math.max(d[3], r.block)
        if d[4] >= 0 then
          d[4] = math.max(d[4], r.block)
        end
      end
    end
  end
end

local reply = { all and 1 or 0 }
for _, d in ipairs(decisions) do
  reply[#reply + 1] = d[1] and 1 or 0
  reply[#reply + 1] = d[2]
  reply[#reply + 1] = ceil_ms(d[3])
  reply[#reply + 1] = d[4] < 0 and -1 or ceil_ms(d[4])
end
return reply
