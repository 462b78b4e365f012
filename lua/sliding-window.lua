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

-- The hash as HGETALL returned it with 'b' and its value moved first. 'b' is written first, so a hash Redis keeps as
-- a listpack (up to hash-max-listpack-entries fields) has it there already; one kept as a hash table has no order.
local function base_first(flat)
  local moved = {}
  for i = 1, #flat, 2 do
    if flat[i] == 'b' then
      moved[1], moved[2] = 'b', flat[i + 1]
    end
  end
  if not moved[1] then
    error('sliding-window state without its base field b')
  end
  for i = 1, #flat, 2 do
    if flat[i] ~= 'b' then
      moved[#moved + 1] = flat[i]
      moved[#moved + 1] = flat[i + 1]
    end
  end
  return moved
end

-- Reads the key's cells (HGETALL, 'b' first) and deletes the stale ones (the whole key when none is live). Returns the
-- total of the live cells, the newest live cell's start (µs; nil: none), the current cell's field (nil: not in the hash
-- yet), the base (nil: none) and the hash. Cells are compared by offset from the base: exact, as cell numbers and
-- starts are integers below 2^53 and the cell length divides both. check does the same inline (most decisions are its).
local function sw_read(r, now)
  local segments = r.param
  local cell = r.window / segments
  local index = (now - now % cell) / cell
  local flat = rcall('HGETALL', r.key)
  if not flat[1] then
    return 0, nil, nil, nil, flat
  end
  if flat[1] ~= 'b' then
    flat = base_first(flat)
  end
  local base = flat[2] + 0
  local at = index - base
  local oldest = at - segments -- offsets up to this one are stale
  local total, top, field, stale = 0, oldest, nil, nil
  for i = 3, #flat, 2 do
    local f = flat[i]
    local offset = f + 0
    if offset > oldest then
      total = total + flat[i + 1]
      if offset > top then
        top = offset
      end
      if offset == at then
        field = f
      end
    else
      stale = stale or {}
      stale[#stale + 1] = f
    end
  end
  if top == oldest then
    rcall('DEL', r.key)
    return 0, nil, nil, nil, {}
  elseif stale then
    rcall('HDEL', r.key, unpack(stale))
  end
  return total, (base + top) * cell, field, base, flat
end

-- The live cells of a hash sw_read returned, oldest first: { start µs, count, field } each.
local function sw_live(r, now, flat, base)
  local cell = r.window / r.param
  local first_live = now - now % cell - r.window + cell
  local live = {}
  for i = 3, #flat, 2 do
    local start = (base + flat[i]) * cell
    if start >= first_live then
      live[#live + 1] = { start, flat[i + 1] + 0, flat[i] }
    end
  end
  if #live > 1 then
    table.sort(live, older)
  end
  return live
end

-- Counts `cost` in cell `index`, which the hash does not hold yet: in a new hash, under the base, or after moving the
-- base to it so that offsets stay small. Field names and the base are written with '%d': integers, and '%d' is the
-- cheapest format (prelude).
local function sw_add(r, now, flat, index, base, cost)
  local units = cost == 1 and '1' or format('%d', cost)
  if not base then
    -- Its base and its first cell in one command, 'b' first (see base_first).
    rcall('HSET', r.key, 'b', format('%d', index), '0', units)
    return
  end
  local offset = index - base
  if offset <= 32767 and offset >= -32767 then
    rcall('HINCRBY', r.key, format('%d', offset), units)
    return
  end
  -- Move the base to the current cell: rewrite the live cells under their new offsets.
  local cell = r.window / r.param
  local live = sw_live(r, now, flat, base)
  for _, c in ipairs(live) do
    rcall('HDEL', r.key, c[3])
  end
  for _, c in ipairs(live) do
    rcall('HSET', r.key, int(c[1] / cell - index), c[2])
  end
  rcall('HSET', r.key, 'b', int(index))
  rcall('HINCRBY', r.key, '0', units)
end

ALGORITHMS['sw'] = {
  -- A run of one key's calls is decided at once (the driver's decide_run).
  runs = true,
  -- Reads its parameter (segments) from ARGV; see the driver.
  param = true,
  check = function(r, now, cost, apply)
    -- sw_read inlined: a Lua call of its results was about 4% of a batched decision.
    local key, window, segments = r.key, r.window, r.param
    local cell = window / segments
    local current = now - now % cell -- exact for integers below 2^53, and no call into C (see fixed-window.lua)
    local index = current / cell
    local flat = rcall('HGETALL', key)
    local total, newest, field, base = 0, nil, nil, nil
    local head = flat[1]
    if head then
      if head ~= 'b' then
        flat = base_first(flat)
      end
      base = flat[2] + 0
      local at = index - base
      local oldest = at - segments
      local top, stale = oldest, nil
      for i = 3, #flat, 2 do
        local f = flat[i]
        local offset = f + 0
        if offset > oldest then
          total = total + flat[i + 1]
          if offset > top then
            top = offset
          end
          if offset == at then
            field = f
          end
        else
          stale = stale or {}
          stale[#stale + 1] = f
        end
      end
      if top == oldest then
        rcall('DEL', key)
        base, flat = nil, {}
      else
        if stale then
          rcall('HDEL', key, unpack(stale))
        end
        newest = (base + top) * cell
      end
    end
    -- The key is at full budget again when its newest counted cell leaves the window.
    local limit = r.limit
    if total + cost <= limit then
      if cost == 0 then
        return true, limit - total, newest and (newest + window - now) or 0, 0
      end
      if field then
        -- The current cell is counted already, so it is the newest (or one after it is, the clock having stepped
        -- back): the expiry stays. A cost of 1, most requests', goes as the string: Redis formats a number argument
        -- with '%.17g' (about 150 ns).
        if apply then
          rcall('HINCRBY', key, field, cost == 1 and '1' or cost)
        end
        return true, limit - total - cost, newest + window - now, 0
      end
      -- The key lives until its newest cell leaves the window: its expiry is set when that cell is new.
      local moved = not newest or current > newest
      if moved then
        newest = current
      end
      if apply then
        sw_add(r, now, flat, index, base, cost)
        if moved then
          -- ceil_ms inlined (the time left is positive: the current cell ends after now), and the ms sent as a string:
          -- '%d' cost less than Redis's '%.17g' of a number.
          local ms = (newest + window - now) / 1000
          local fraction = ms % 1
          if fraction > 0 then
            ms = ms - fraction + 1
          end
          rcall('PEXPIRE', key, format('%d', ms))
        end
      end
      return true, limit - total - cost, newest + window - now, 0
    end
    -- More than the limit in force (an override's, cut below the cost): no wait lets it through.
    if cost > limit then
      return false, limit - total, newest and (newest + window - now) or 0, -1
    end
    -- Refused: cells leave the window oldest first; wait until enough units have left with them.
    local need, freed = total + cost - limit, 0
    for _, c in ipairs(sw_live(r, now, flat, base)) do
      freed = freed + c[2]
      if freed >= need then
        return false, limit - total, newest + window - now, c[1] + window - now
      end
    end
    return false, limit - total, newest + window - now, newest + window - now
  end,
  -- Units taken ahead (a local budget) count in the current cell: spent after it, they would leave the window a cell
  -- early, and given back after it, they would come off a cell they are not in.
  lease_end = function(r, now)
    local cell = r.window / r.param
    return now - now % cell + cell
  end,
  refund = function(r, now, cost)
    -- Give back from the newest cells first: that is where the refunded request was counted.
    local _, newest, _, base, flat = sw_read(r, now)
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
