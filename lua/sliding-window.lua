--[[
  Sliding window counter: the window is cut into `segments` cells of window/segments each, counted in one hash
  per key (value = units admitted in the cell). A request passes when the live cells (the current one and the
  segments-1 before it) leave room for its cost. Memory per key is O(segments), whatever the traffic.

  Guarantee: at most `limit` units are admitted in any interval of length window - window/segments (such an
  interval spans at most `segments` cells, all counted together). Over a full window, at most 2 x limit.

  Cells are numbered absolutely (cell number = start / cell length), not modulo `segments` (the seed articles'
  bug): a stale cell can never be mistaken for a live one after an idle gap; stale fields are deleted as they
  are met. To keep the hash small, a field holds the cell number minus a base kept in field 'b' (set when the
  hash is created, moved when offsets grow past 32767): small integers pack into a few bytes each, where
  13-digit timestamps took 8.
  The key's name carries the cell length (key.builder.ts): a live change of it starts afresh; a new window or
  limit with the same cell length reads the cells correctly (a longer window sees only the cells the key still
  held: it expires when its newest cell leaves the old window).

  Called through the driver (lua/includes/driver.lua), which decides a batch of calls and holds the full KEYS/ARGV
  contract; what this algorithm's rules carry there:
  state key   hash: field 'b' = base cell number; field <offset> = count of cell (base + offset)
  lockout key (only for a rule with a lockout) a string holding the instant (µs) the lockout started
  definition  'sw', limit, window (ms), lockout (ms, 0 = none), segments
  call cost   units the request takes (integer, 1..limit; 0 for a peek)

  check returns: allowed, remaining, reset after (µs), retry after (µs); the driver replies them per rule
]]
--- @include "prelude"

local function older(a, b)
  return a[1] < b[1]
end

-- Reads the key's cells and deletes the stale ones (the whole key when none is live). Returns the total of the live
-- cells, the newest live cell's start (µs; nil: none), the current cell's start (µs), number and field (nil: not in
-- the hash yet), the base (nil: none) and the hash as HGETALL returned it. An admitted request needs no more, so no
-- table is made per cell (each was about 740 instructions in Redis's Lua): the cells as a list are made only for a
-- refusal, a refund or a move of the base (sw_live).
local function sw_read(r, now)
  local cell = r.window / r.param
  local current = now - now % cell -- exact for integers below 2^53, and no call into C (see fixed-window.lua)
  local flat = rcall('HGETALL', r.key)
  local n = #flat
  if n == 0 then
    return 0, nil, current, current / cell, nil, nil, flat
  end
  local base
  for i = 1, n, 2 do
    if flat[i] == 'b' then
      base = flat[i + 1] + 0
      break
    end
  end
  local first_live = current - r.window + cell
  local total, newest, field, stale = 0, nil, nil, nil
  for i = 1, n, 2 do
    local f = flat[i]
    if f ~= 'b' then
      local start = (base + f) * cell
      if start < first_live then
        stale = stale or {}
        stale[#stale + 1] = f
      else
        total = total + flat[i + 1]
        if not newest or start > newest then
          newest = start
        end
        if start == current then
          field = f
        end
      end
    end
  end
  if not newest then
    rcall('DEL', r.key)
    return 0, nil, current, current / cell, nil, nil, {}
  elseif stale then
    rcall('HDEL', r.key, unpack(stale))
  end
  return total, newest, current, current / cell, field, base, flat
end

-- The live cells of a hash sw_read returned, oldest first: { start µs, count, field } each.
local function sw_live(r, now, flat, base)
  local cell = r.window / r.param
  local first_live = now - now % cell - r.window + cell
  local live = {}
  for i = 1, #flat, 2 do
    if flat[i] ~= 'b' then
      local start = (base + flat[i]) * cell
      if start >= first_live then
        live[#live + 1] = { start, flat[i + 1] + 0, flat[i] }
      end
    end
  end
  if #live > 1 then
    table.sort(live, older)
  end
  return live
end

-- The field of cell `index`, which the hash does not hold yet, creating or moving the base so that offsets stay small.
local function sw_field(r, now, flat, index, base)
  if base and math.abs(index - base) <= 32767 then
    return int(index - base)
  end
  -- Move the base to the current cell: rewrite the live cells under their new offsets.
  local cell = r.window / r.param
  local live = base and sw_live(r, now, flat, base) or {}
  for _, c in ipairs(live) do
    rcall('HDEL', r.key, c[3])
  end
  for _, c in ipairs(live) do
    rcall('HSET', r.key, int(c[1] / cell - index), c[2])
  end
  rcall('HSET', r.key, 'b', int(index))
  return '0'
end

ALGORITHMS['sw'] = {
  -- Reads its parameter (segments) from ARGV; see the driver.
  param = true,
  check = function(r, now, cost, apply)
    local total, newest, current, index, field, base, flat = sw_read(r, now)
    -- The key is at full budget again when its newest counted cell leaves the window.
    if total + cost <= r.limit then
      if cost == 0 then
        return true, r.limit - total, newest and (newest + r.window - now) or 0, 0
      end
      local was_newest = newest
      newest = max(current, newest or current)
      if apply then
        -- A cost of 1, most requests', goes as the string: Redis formats a number argument with '%.17g' (about 150 ns).
        rcall('HINCRBY', r.key, field or sw_field(r, now, flat, index, base), cost == 1 and '1' or cost)
        -- The key lives until its newest cell leaves the window: set when that cell is new, not on every write.
        if newest ~= was_newest then
          rcall('PEXPIRE', r.key, ceil_ms(newest + r.window - now))
        end
      end
      return true, r.limit - total - cost, newest + r.window - now, 0
    end
    -- Refused: cells leave the window oldest first; wait until enough units have left with them.
    local need, freed = total + cost - r.limit, 0
    for _, c in ipairs(sw_live(r, now, flat, base)) do
      freed = freed + c[2]
      if freed >= need then
        return false, r.limit - total, newest + r.window - now, c[1] + r.window - now
      end
    end
    return false, r.limit - total, newest + r.window - now, newest + r.window - now
  end,
  -- Units taken ahead (a local budget) count in the current cell: spent after it, they would leave the window a cell
  -- early, and given back after it, they would come off a cell they are not in.
  lease_end = function(r, now)
    local cell = r.window / r.param
    return now - now % cell + cell
  end,
  refund = function(r, now, cost)
    -- Give back from the newest cells first: that is where the refunded request was counted.
    local _, newest, _, _, _, base, flat = sw_read(r, now)
    if not newest then
      return
    end
    local live = sw_live(r, now, flat, base)
    for i = #live, 1, -1 do
      if cost <= 0 then
        break
      end
      local take = min(cost, live[i][2])
      local field = live[i][3]
      if take == live[i][2] then
        rcall('HDEL', r.key, field)
      else
        rcall('HINCRBY', r.key, field, -take)
      end
      cost = cost - take
    end
  end,
}
--- @include "driver"
