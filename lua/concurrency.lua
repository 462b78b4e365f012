--[[
  Concurrency limiter: the leases of requests in flight for one tracker under one rule. A lease is taken when
  fewer than `limit` are held, renewed while its request runs, and released when it ends; a lease nobody renews
  expires `lease` ms after it was last taken or renewed (a crashed process frees its slots). Leases past their
  expiry are dropped before every operation, so an expired lease never counts. Twin: lib/stores/memory-lease.store.ts.

  KEYS[1]  a sorted set `<prefix>:<rule>:cc:{<tracker>}`: lease ids, each scored by its expiry (µs since the epoch).
           Its TTL follows the latest expiry, so a tracker's set disappears with its last lease.
  ARGV[1]  now (µs since the epoch), or '' to read Redis's own clock (TIME)
  ARGV[2]  operation: 'acquire', 'renew' or 'release'
  ARGV[3]  lease id (random, chosen by the caller)
  ARGV[4]  limit: leases allowed at once (integer >= 1; acquire only)
  ARGV[5]  lease duration (ms, integer >= 1; acquire and renew)

  Reply    acquire: {acquired (0/1), leases held after the call, wait (ms) until the oldest lease expires (0 when acquired)}
           renew:   {1 when the lease was held and now expires `lease` ms from now, 0 when it was lost}
           release: {leases held after the call}
]]
local key = KEYS[1]
local now_arg = ARGV[1]
local op = ARGV[2]
local id = ARGV[3]
local limit = tonumber(ARGV[4])
local lease_us = (tonumber(ARGV[5]) or 0) * 1000

local now
if now_arg == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
else
  now = tonumber(now_arg)
end

-- Integers are written with '%.0f': Lua's tostring would print 1.7e+15.
local function int(x)
  return string.format('%.0f', x)
end

-- The key lives as long as its latest lease (PEXPIRE rounds up, so it never outlives a lease by less than needed).
local function expire_with_latest()
  local latest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if latest[2] then
    redis.call('PEXPIRE', key, math.max(1, math.ceil((tonumber(latest[2]) - now) / 1000)))
  end
end

-- A lease whose expiry is now or earlier is over (the memory twin drops it on the same condition).
redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now))

if op == 'acquire' then
  local held = redis.call('ZCARD', key)
  if held >= limit then
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    return {0, held, math.max(1, math.ceil((tonumber(oldest[2]) - now) / 1000))}
  end
  redis.call('ZADD', key, int(now + lease_us), id)
  expire_with_latest()
  return {1, held + 1, 0}
elseif op == 'renew' then
  -- XX: a lease that expired (or was released) is not brought back; its slot may be someone else's by now.
  local changed = redis.call('ZADD', key, 'XX', 'CH', int(now + lease_us), id)
  if changed == 0 and not redis.call('ZSCORE', key, id) then
    return {0}
  end
  expire_with_latest()
  return {1}
elseif op == 'release' then
  redis.call('ZREM', key, id)
  return {redis.call('ZCARD', key)}
end
return redis.error_reply('ERR concurrency.lua: unknown operation ' .. tostring(op))
