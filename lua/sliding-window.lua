--[[
  Sliding window counter: the window is cut into `segments` cells of window/segments each, counted in one hash
  per key (value = units admitted in the cell). A request passes when the live cells (the current one and the
  segments-1 before it) leave room for its cost. Memory per key is O(segments), whatever the traffic.

  Guarantee: at most `limit` units are admitted in any interval of length window - window/segments (such an
  interval spans at most `segments` cells, all counted together). Over a full window, at most 2 x limit.

  A field is its cell's number (start / cell length) modulo CELLS = 65536, a small integer that packs into a few
  bytes, where a 13-digit timestamp took 8. Modulo 65536, not `segments` (the seed articles' bug): a key holds
  only cells of the last two windows at most, 2,000 cells (each write comes after a read that deleted the stale
  cells, and the key expires a window after its newest cell), so the cell a field names is never in doubt. It is
  read as the cell at most 32,768 cells before the current one or 32,767 after it: a cell ahead of the clock (a
  clock stepped back) counts, as the memory twin counts it. Stale fields are deleted as they are met.
  An earlier layout held the cell number minus a base kept in field 'b': finding the base cost each decision a
  field pair and a number read more (callgrind: 15% of a batched decision's Redis instructions).
  The key's name carries the layout and the cell length (`swr<cell ms>`, key.builder.ts): a live change of the cell
  length starts afresh; a new window or limit with the same cell length reads the cells correctly (a longer window
  sees only the cells the key still held: it expires when its newest cell leaves the old window).

  Called through the driver (lua/includes/driver.lua), which decides a batch of calls and holds the full KEYS/ARGV
  contract; what this algorithm's rules carry there:
  state key   hash: field <cell number modulo 65536> = count of that cell
  lockout key (only for a rule with a lockout) a string holding the instant (µs) the lockout started
  definition  'sw', limit, window (ms), lockout (ms, 0 = none), segments
  call cost   units the request takes (integer, 1..limit; 0 for a peek)

  check returns: allowed, remaining, reset after (µs), retry after (µs); the driver replies them per rule
]]
--- @include "prelude"

-- Cell numbers modulo CELLS name the fields; a field is read as the cell within HALF cells of the current one.
local CELLS, HALF = 65536, 32768

local function older(a, b)
  return a[1] < b[1]
end

-- The start (µs) of the cell that field `f` names: `index` is the current cell's number, `current` its start (the
-- cells as sw_live lists them; sw_read has it written out).
local function cell_start(f, index, current, cell)
  local back = (index - f) % CELLS -- `%`: the VM's own, exact for these integers (see fixed-window.lua)
  if back > HALF then
    back = back - CELLS
  end
  return current - back * cell
end

-- Reads the key's cells and deletes the stale ones (the whole key when none is live). Returns the total of the live
-- cells, the newest live cell's start (µs; nil: none), the current cell's start (µs), number and field (nil: not in
-- the hash yet), and the hash as HGETALL returned it. An admitted request needs no more, so no table is made per
-- cell (each was about 740 instructions in Redis's Lua): the cells as a list are made only for a refusal or a
-- refund (sw_live).
local function sw_read(r, now)
  local cell = r.window / r.param
  local current = now - now % cell -- exact for integers below 2^53, and no call into C (see fixed-window.lua)
  local index = current / cell
  local flat = rcall('HGETALL', r.key)
  local n = #flat
  if n == 0 then
    return 0, nil, current, index, nil, flat
  end
  local first_live = current - r.window + cell
  local total, newest, field, stale = 0, nil, nil, nil
  for i = 1, n, 2 do
    local f = flat[i]
    -- cell_start, written out: a call per field was a tenth of a batched decision (1,100 of 26,700 instructions).
    local back = (index - f) % CELLS
    if back > HALF then
      back = back - CELLS
    end
    local start = current - back * cell
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
  if not newest then
    rcall('DEL', r.key)
    return 0, nil, current, index, nil, {}
  elseif stale then
    rcall('HDEL', r.key, unpack(stale))
  end
  return total, newest, current, index, field, flat
end

-- The live cells of a hash sw_read returned, oldest first: { start µs, count, field } each.
local function sw_live(r, now, flat)
  local cell = r.window / r.param
  local current = now - now % cell
  local index = current / cell
  local first_live = current - r.window + cell
  local live = {}
  for i = 1, #flat, 2 do
    local f = flat[i]
    local start = cell_start(f, index, current, cell)
    if start >= first_live then
      live[#live + 1] = { start, flat[i + 1] + 0, f }
    end
  end
  if #live > 1 then
    table.sort(live, older)
  end
  return live
end

ALGORITHMS['sw'] = {
  -- Reads its parameter (segments) from ARGV; see the driver.
  param = true,
  check = function(r, now, cost, apply)
    local total, newest, current, index, field, flat = sw_read(r, now)
    -- The key is at full budget again when its newest counted cell leaves the window.
    if total + cost <= r.limit then
      if cost == 0 then
        return true, r.limit - total, newest and (newest + r.window - now) or 0, 0
      end
      local was_newest = newest
      if not newest or current > newest then
        newest = current
      end
      if apply then
        -- A cost of 1, most requests', goes as the string: Redis formats a number argument with '%.17g' (about 150 ns).
        rcall('HINCRBY', r.key, field or int(index % CELLS), cost == 1 and '1' or cost)
        -- The key lives until its newest cell leaves the window: set when that cell is new, not on every write.
        if newest ~= was_newest then
          rcall('PEXPIRE', r.key, ceil_ms(newest + r.window - now))
        end
      end
      return true, r.limit - total - cost, newest + r.window - now, 0
    end
    -- Refused: cells leave the window oldest first; wait until enough units have left with them.
    local need, freed = total + cost - r.limit, 0
    for _, c in ipairs(sw_live(r, now, flat)) do
      freed = freed + c[2]
      if freed >= need then
        return false, r.limit - total, newest + r.window - now, c[1] + r.window - now
      end
    end
    return false, r.limit - total, newest + r.window - now, newest + r.window - now
  end,
  refund = function(r, now, cost)
    -- Give back from the newest cells first: that is where the refunded request was counted.
    local _, newest, _, _, _, flat = sw_read(r, now)
    if not newest then
      return
    end
    local live = sw_live(r, now, flat)
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
