--[[
  Per-tracker overrides of the rules with `overrides: true` (lib/stores/redis/redis-override.store.ts): the admin
  side. The decisions read an override inside their own script (lua/includes/driver.lua, apply_override).

  An override key holds 'until:limit' or 'until:b' (a block), until in µs on the decisions' clock, then ':' and what
  listing shows (a JSON array: the tracker as given, the reason). It is also given a PX expiry, on Redis's clock, to
  clean it up; the driver compares `until` with its own now, so an app's injected clock decides when it ends.
  The index of a key prefix's overrides is a sorted set, members (JSON [rule, tracker]) scored by `until`; past
  members are dropped whenever it is written or read. It has no hash tag: on a Cluster it is one key on one node,
  written by its own call beside the override's.

  KEYS[1]   the override key; for 'index', 'unindex' and 'list', the index
  ARGV[1]   the operation: 'set' | 'get' | 'del' | 'index' | 'unindex' | 'list'
  ARGV[2]   now in µs since the epoch, or '' to use Redis's TIME
  set       ARGV[3] ttl (ms), ARGV[4] the limit or 'b', ARGV[5] what listing shows. Returns until (µs).
  get       Returns { the key's value or false, now (µs) }.
  del       Returns 1 if the key existed, else 0.
  index     ARGV[3] until (µs), ARGV[4] the member. Returns 0.
  unindex   ARGV[3] the member. Returns 0.
  list      Returns { now (µs), member, until, member, until, ... }, soonest first.
]]
local op = ARGV[1]
local now
if ARGV[2] == '' then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
else
  now = ARGV[2] + 0
end
-- Integers up to 2^53 as digits: tostring would print 1.7e+15.
local function int(x)
  return string.format('%d', x)
end

if op == 'set' then
  local ends = now + ARGV[3] * 1000
  redis.call('SET', KEYS[1], int(ends) .. ':' .. ARGV[4] .. ':' .. ARGV[5], 'PX', ARGV[3])
  return ends
elseif op == 'get' then
  return { redis.call('GET', KEYS[1]), now }
elseif op == 'del' then
  return redis.call('DEL', KEYS[1])
end

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', int(now))
if op == 'index' then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
  return 0
elseif op == 'unindex' then
  redis.call('ZREM', KEYS[1], ARGV[3])
  return 0
end
local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
table.insert(entries, 1, now)
return entries
