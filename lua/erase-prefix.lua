--[[
  Erases one page of the keys under a key prefix, for the testing kit's `reset()` (never FLUSHALL: only the keys
  this module wrote). The caller repeats the call with the cursor returned until it is "0". SCAN may return a key
  twice or none of the keys written meanwhile; a reset between tests runs while nothing else writes.

  ARGV[1]  the SCAN cursor: "0" on the first call, then the one the previous call returned
  ARGV[2]  the SCAN pattern: the key prefix, glob-escaped, followed by ":*"

  Reply    {next cursor ("0" when the scan is complete), keys deleted by this call}
]]
local cursor = ARGV[1]
local pattern = ARGV[2]
-- unpack() takes a few thousand values at most: keys are deleted in slices of this size.
local SLICE = 500

local page = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000)
local keys = page[2]
for first = 1, #keys, SLICE do
  redis.call('UNLINK', unpack(keys, first, math.min(first + SLICE - 1, #keys)))
end
return {page[1], #keys}
