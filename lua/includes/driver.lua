-- Shared tail of every rate-limit script: decides a batch of calls, in order, each as if it were a script call of
-- its own (RedisStore coalesces the calls of one event-loop turn; a lone call is a batch of one). TIME and the
-- deadline are read once for the batch. A call of several rules is all-or-nothing: each rule is checked first
-- and state is written only if all admit. See the contract below for KEYS and ARGV.
--[[
  KEYS        per call, per rule: its state key, then its lockout key only when its lockout is > 0, then its override
              key only when it is overridable (its algorithm id ends in '+')
  ARGV[1]     now in µs since the epoch, or '' to use Redis's TIME
  ARGV[2]     deadline in µs since the epoch (Redis's clock), or '' for none: past it nothing is written
  ARGV[3]     A: how many call arguments follow (a call, or a run of identical calls in a row); or, for a lone call
              of one unit under one rule without a lockout, its operation ('c', 'p' or 'r'), and then ARGV[4]
              is that rule's definition and nothing else follows (the short form: see the lone call below)
  ARGV[4]     D: how many rule definitions follow the call arguments
  ARGV[5]     m: how many of the keys are not in KEYS but in the last m arguments, after those of KEYS (a Cluster
              batch, whose KEYS must hash to one slot; see the cross-slot check below); 0 otherwise
  then A call arguments, the batch's calls in order: a call is the operation, 'c' (consume) | 'p' (peek) |
              'r' (refund), then its rules separated by ',', each the number of its definition (1..D) followed by
              '*' and its cost in units when the cost is not 1: 'c1' consumes 1 unit under definition 1, 'c1*3,2' is
              all-or-nothing over 3 units of definition 1 and 1 of definition 2 (a peek's cost is what it asks
              about); N > 1 identical calls in a row are one argument, 'N:' and the call ('32:c1'), or 'N=' and the
              call when they are all on the same keys, which KEYS then holds once for them all (a hot key). Two more
              operations, of one rule each, serve local budgets (lib/budgets): 'l' takes units ahead, as a consume
              whose refusal starts no lockout ('l1*50'); 'g' gives units of such a take back, as a refund, only
              while the take still counts where it was made: '@' and that instant (µs on the decisions' clock, the
              take's reply; 0 = no end) follow ('g1*12@1767225600000000')
  then D rule definitions, one argument each, its fields joined by ',': algorithm id (followed by '+' for a rule
              with `overrides: true`), limit, window (ms), lockout (ms, 0 = none; an escalating one as
              'base:factor:max:forgetAfter', durations in ms; either followed by 'r' when a lockout's end restarts the
              count: the refusal that starts it deletes the state key), then the algorithm's parameter only for
              algorithms registered with `param = true` ('sw,100,60000,0,10')
  then the m keys of a Cluster batch beyond KEYS

  A batch's calls mostly repeat one rule, so a rule's definition is sent and parsed once per batch, and a call
  is one short argument that the script parses once per batch however often it repeats; a run of the same call,
  a batch's usual shape, is one argument (each argument cost Redis about 1,100 instructions to take in).

  Reply: to a batch, per consume or peek call, per rule:
    admitted   one integer, remaining × (window µs + 1) + reset after (µs), when reset after is from 0 to the rule's
               window (it is for every algorithm but a GCRA whose burst is past its rate, and a sliding log on a
               clock that stepped back) and the integer is below 2^52; else a list of two, { remaining, reset after
               (µs) }
    refused    three integers, -1 - remaining, reset after (µs) and retry after (µs; -1 = never)
  An overridable rule's decision is preceded by one integer, the limit in force (its override's, or its own).
  A take's ('l') by two more before that: the instant its units stop counting where they were taken (µs on the
  decisions' clock: the fixed window's end, the sliding window's cell's end; 0 = no such end, a token bucket's or a
  GCRA's units count on) and that instant less now (µs; 0 with it).
  The caller tells them apart by the first element's sign or type (an admitted decision's retry after is 0: not sent),
  and rounds the waits up to ms: every algorithm's waits are whole µs, and the rounding cost Redis about 800
  instructions a decision. Nothing for a refund. To a lone call in the short form whose admission packs into one
  integer: that integer, not a list of it.
  An integer of 2^52 or more in magnitude (a remaining, or -1 - remaining, under a limit past 2^52: a sliding window
  allows limits up to 2^53 - 1) is sent as its digits, a bulk string, which the caller reads back exactly. A client
  may decode a bare integer inexactly near 2^53: ioredis 6 reads one digit by digit as n × 10 + byte - 48, whose
  intermediate n × 10 + byte rounds within 58 of 2^53 (a limit of 2^53 - 1 reported a remaining one too high).
  Below 2^52 a client that accumulates the digits in a double, in whatever order it adds the byte, is exact. The
  waits stay far below it: windows and lockouts are at most 366 days (3.2e13 µs), and a token bucket's or a GCRA's
  wait at most MAX_EXACT_UNITS µs (3.0e15, lib/algorithms/exact-instant.ts).
  { -1 }: the batch reached Redis after its deadline, nothing was written.
  { -2 }: a key of the last m arguments is not served by this node (a slot moved), nothing was written.
]]
-- 2^52: the largest magnitude a reply carries as a bare integer, every client decoding it exactly (see the reply
-- above); past it a remaining goes as its digits. A packed admission stays below it too.
local BARE = 4503599627370496

-- Adds to `reply`, which holds `n` elements, a consume's or peek's decision under a rule of `window` µs (see the reply
-- above), and returns how many it holds then. An admission is one integer where that is exact: Redis converts each
-- element of a reply, and ioredis decodes each, at a cost that hardly depends on its digits (about 180 ns an integer
-- in ioredis 6's decoder, 10 ns a digit), so two became one.
local function push(reply, n, window, allowed, remaining, reset, retry)
  -- A remaining below 0 (a limit lowered under the units already counted) is reported as 0.
  if remaining < 0 then
    remaining = 0
  end
  if allowed then
    n = n + 1
    if reset <= window and reset >= 0 then
      local packed = remaining * (window + 1) + reset
      if packed < BARE then
        reply[n] = packed
        return n
      end
    end
    if remaining >= BARE then
      remaining = int(remaining)
    end
    reply[n] = { remaining, reset }
    return n
  end
  local first = -1 - remaining
  if first <= -BARE then
    first = int(first)
  end
  reply[n + 1] = first
  reply[n + 2] = reset
  reply[n + 3] = retry < 0 and -1 or retry
  return n + 3
end

-- The definitions made, by their argument: DEFINED['sw,100,60000,0,10'] is that rule's table. A function library keeps
-- it from call to call, so that a definition is made once, not on every call (a seventh of a lone call's Redis
-- instructions). It is safe to share: a definition's fields follow from its argument alone, and what a decision sets
-- on it (its key and cost, an override's limit, a lockout's start) it sets before reading, as the decisions of one
-- batch always have in turn. An EVAL's script, run anew on every call, keeps none (false): only a library being
-- loaded sees redis.register_function.
local DEFINED = redis.register_function ~= nil and {} or false
-- Definitions DEFINED holds; past MOST_DEFINED (a limit that each request sets can make many) it starts again empty.
-- Each takes about 0.9 KB of Redis's memory.
local defined_count, MOST_DEFINED = 0, 64

-- The rule definition a definition argument holds: its table. One argument, not one per field: each argument cost
-- Redis about 1,100 instructions to take in, and a kept definition is then one lookup (a tenth of a lone FCALL); an
-- EVAL, which keeps none, pays about as much for the match as it saves.
local function define(argument)
  if DEFINED then
    local found = DEFINED[argument]
    if found then
      return found
    end
  end
  local id, limit, window, lockout, param = string.match(argument, '^([^,]+),([^,]+),([^,]+),([^,]+),?([^,]*)$')
  local algorithm = ALGORITHMS[id]
  -- Every field a decision sets is named here (cost and key by take_keys): a field added later grows the table.
  local r = { algorithm = algorithm, limit = limit + 0, window = window * 1000, block = 0, restart = false, cost = 1, key = false }
  if not algorithm then
    -- An overridable rule ('fw+'): its calls carry its override key (see take_keys); its own limit is kept apart.
    algorithm = ALGORITHMS[string.sub(id, 1, -2)]
    r.algorithm, r.override, r.own_limit = algorithm, true, r.limit
  end
  if lockout ~= '0' then
    if string.byte(lockout, -1) == 114 then
      -- 'r' (afterLockout 'restart'): lock_out clears the count.
      r.restart = true
      lockout = string.sub(lockout, 1, -2)
    end
    local block = tonumber(lockout)
    if block then
      r.block = block * 1000
    else
      local base, factor, top, forget = string.match(lockout, '^(%d+):([^:]+):(%d+):(%d+)$')
      r.block, r.factor, r.max, r.forget = tonumber(base) * 1000, tonumber(factor), tonumber(top), tonumber(forget) * 1000
    end
  end
  if algorithm.param then
    r.param = param + 0
  end
  if algorithm.prepare then
    algorithm.prepare(r)
  end
  if DEFINED then
    if defined_count >= MOST_DEFINED then
      DEFINED, defined_count = {}, 0
    end
    defined_count = defined_count + 1
    DEFINED[argument] = r
  end
  return r
end

-- Call arguments parsed, by the argument, kept from call to call as DEFINED is (false in an EVAL's script): a batch's
-- usual call argument ('31:c1') is then one table lookup instead of a parse. A parsed call names its rules by their
-- numbers among the batch's definitions (`ref`, or `refs` for several), which decide binds to each batch's own
-- definitions (see parse there). Past MOST_PARSED arguments (about 0.45 KB each) it starts again empty. A give-back
-- ('g') is not kept: its argument holds an instant, so none comes twice.
local PARSED = DEFINED and {} or false
local parsed_count, MOST_PARSED = 0, 256

-- A call argument parsed: { op, n = rule count, ref or refs[i] = its rules' definition numbers, and its cost: `cost`
-- for one rule, costs[i] for several; `times` it is made in a row; `shared` for a run on one set of keys }.
local function parse_call(argument)
  -- A run of identical calls: 'N:' and the call, or 'N=' and the call for a run on one set of keys.
  local spec, times, shared = argument, 1, false
  local colon = string.find(argument, '[:=]')
  if colon then
    times = string.sub(argument, 1, colon - 1) + 0
    spec = string.sub(argument, colon + 1)
    shared = string.byte(argument, colon) == 61
  end
  local op = string.sub(spec, 1, 1)
  local ref = tonumber(string.sub(spec, 2))
  -- Every field decide sets on a call is named here ([1] and the definitions, plain and general): a field added later
  -- grows the table.
  if op == 'g' then
    -- A give-back: 'g', one rule, its units, '@' and the instant after which they no longer go back.
    local rule, cost, till = string.match(spec, '^g(%d+)%*?(%d*)@(%d+)$')
    return { false, op = op, n = 1, ref = tonumber(rule), cost = cost == '' and 1 or tonumber(cost), till = till + 0, times = times, shared = shared, plain = false, general = false }
  elseif ref then
    -- One rule, one unit: most calls, read without a pattern, in one table.
    return { false, op = op, n = 1, ref = ref, cost = 1, apply = op == 'c', times = times, shared = shared, plain = false, general = false }
  end
  local call = { op = op, n = 0, refs = {}, costs = {}, times = times, shared = shared, plain = false, general = false }
  for rule, cost in string.gmatch(spec, '(%d+)%*?(%d*)') do
    local i = call.n + 1
    call.n = i
    call.refs[i] = tonumber(rule)
    call.costs[i] = cost == '' and 1 or tonumber(cost)
  end
  -- One rule with a cost of its own ('c1*3') is decided as one rule.
  call.cost = call.costs[1]
  call.apply = op == 'c'
  return call
end

-- The driver is one function, decide, which a function library (FUNCTION LOAD, Redis 7+) registers: everything above
-- it is then made once, when the library is loaded, instead of on every call. An EVAL's script is its body, the
-- function's first line and last `end` taken away (lua-script.loader.ts): its returns end the script.
local function decide(KEYS, ARGV)
  if not rcall then
    -- A library being loaded sees only redis.register_function: what the prelude takes from Redis's Lua is taken here.
    rcall, floor, max, min, format = redis.call, math.floor, math.max, math.min, string.format
  end
  -- Numbers in ARGV are read by arithmetic, not tonumber (see get_number in the prelude): a lone call pays this
  -- head in full, and tonumber was about 13% of its script time.
  local now
  app_clock = ARGV[1] ~= ''
  if not app_clock then
    -- Redis's own clock, so that app hosts whose clocks disagree still share one window.
    local t = rcall('TIME')
    now = t[1] * 1000000 + t[2]
  else
    now = ARGV[1] + 0
  end
  -- A caller that timed out has already decided without us; a command that reaches Redis after that (a stalled
  -- server, a full socket buffer) must not count what nobody is waiting for.
  if ARGV[2] ~= '' and now > ARGV[2] + 0 then
    return { -1 }
  end

  -- A lone call of one unit under one rule without a lockout (an app with one decision in flight, or coalescing off):
  -- decided here, before the tables and functions only a batch needs are made. A script's tables and functions are
  -- made anew on every call, and those were a fifth of a lone call's Redis instructions (callgrind: 102,000 against
  -- 81,000 for a fixed window). The same check or refund as decide_one below, which this skips only because a rule
  -- without a lockout has nothing else to do.
  -- It comes in the short form (ARGV[3] is its operation, its definition follows): the counts and the call argument of
  -- the batch form were three more arguments, each of which cost Redis about 1,100 instructions to take in.
  local op = ARGV[3]
  if op == 'c' or op == 'p' or op == 'r' then
    local r = define(ARGV[4])
    r.key = KEYS[1]
    if op == 'r' then
      r.algorithm.refund(r, now, 1)
      return {}
    end
    local allowed, remaining, reset, retry = r.algorithm.check(r, now, 1, op == 'c')
    -- A packed admission (as push packs it) is the whole reply, an integer: a table reply of one integer cost Redis
    -- about 4,600 instructions more (callgrind), its conversion looking up six of the table's fields first. Packed
    -- here, not by calling push: a Lua call was about 900 instructions of a lone fixed-window call's 68,000. Anything
    -- else (a refusal, a pair, a remaining below 0 to clamp) goes through push.
    local packed = allowed and remaining >= 0 and reset >= 0 and reset <= r.window and remaining * (r.window + 1) + reset
    if packed and packed < BARE then
      return packed
    end
    local reply = {}
    push(reply, 0, r.window, allowed, remaining, reset, retry)
    return reply
  end

  -- The batch's reply, sized for one element (a refund's empty reply is made at the end), and how many it holds.
  local reply, n = { 0 }, 0

  local call_args, definition_count = ARGV[3] + 0, ARGV[4] + 0
  local extra = ARGV[5] == '0' and 0 or ARGV[5] + 0

  -- The rule definitions, parsed once: a call's rule is one of these tables (a copy when a call has several rules).
  local definitions, has_lockout, has_override = {}, false, false
  local a = 5 + call_args
  for i = 1, definition_count do
    local r = define(ARGV[a + i])
    has_lockout = has_lockout or r.block > 0
    has_override = has_override or r.override
    definitions[i] = r
  end
  a = a + definition_count

  local keys = KEYS
  if extra > 0 then
    -- A key another node serves (or one a migration already moved) fails any command on it, and a failure midway
    -- would leave the earlier calls written and their callers told of an error. So every key is tried first with
    -- a read that cannot fail the script, before anything is written; the caller then sends each call on its own.
    keys = {}
    for i = 1, #KEYS do
      keys[i] = KEYS[i]
    end
    for i = 1, extra do
      local key = ARGV[a + i]
      local ok = redis.pcall('EXISTS', key)
      if type(ok) == 'table' and ok.err then
        return { -2 }
      end
      keys[#KEYS + i] = key
    end
  end
  local k = 0

  -- Each call argument of the batch, parsed (see parse_call) and bound to this batch's definitions: [i] is the
  -- definition of its i-th rule, `plain` when it is a consume or peek of one rule without a lockout or an override.
  -- Memoised by the argument itself (Lua strings are interned: a repeated call is one table lookup).
  local parsed = {}
  local function parse(argument)
    local call = PARSED and PARSED[argument]
    if not call then
      call = parse_call(argument)
      if PARSED and call.op ~= 'g' then
        if parsed_count >= MOST_PARSED then
          PARSED, parsed_count = {}, 0
        end
        parsed_count = parsed_count + 1
        PARSED[argument] = call
      end
    end
    local refs = call.refs
    if refs then
      for i = 1, call.n do
        call[i] = definitions[refs[i]]
      end
    else
      call[1] = definitions[call.ref]
    end
    local first, op = call[1], call.op
    local plain = call.n == 1 and (op == 'c' or op == 'p') and first.block == 0 and not first.override
    call.plain = plain
    -- Decided by decide_one or decide_all (see `general` below), not by the plain path or decide_run's own.
    call.general = not (plain and (not call.shared or first.algorithm.runs))
    parsed[argument] = call
    return call
  end

  -- Whether the batch has a call the plain path and the run path below do not decide: several rules, a lockout, an
  -- override, a refund, a take or a give-back. Most batches have none, and the functions that decide those calls are
  -- then not made: a script's functions are made anew on every call, and these were 6.5% of a batch of one plain call
  -- (callgrind). The arguments are parsed here, once each; the loop below finds them in `parsed`.
  local general = false
  for i = 6, 5 + call_args do
    local argument = ARGV[i]
    local call = parsed[argument] or parse(argument)
    general = general or call.general
  end

  local decide_one, decide_all
  if general then
    -- Gives rule `r` its cost and next keys.
    local function take_keys(r, cost)
      r.cost = cost
      k = k + 1
      r.key = keys[k]
      if r.block > 0 then
        k = k + 1
        r.block_key = keys[k]
      end
      if r.override then
        k = k + 1
        r.override_key = keys[k]
      end
    end

    -- Applies overridable rule `r`'s override (lib/overrides), made only for a batch that has such a rule. Its key holds
    -- 'until:limit' or 'until:b' (a block), until in µs on the decisions' clock, then what the service lists; the key's
    -- own expiry only cleans up. Sets r.limit to the limit in force, and r.blocked to a block's time left (µs) or false.
    local apply_override
    if has_override then
      function apply_override(r)
        r.limit, r.blocked = r.own_limit, false
        local raw = rcall('GET', r.override_key)
        if not raw then
          return
        end
        local ends, what = string.match(raw, '^(%d+):(%w+)')
        if not ends or ends - now <= 0 then
          return
        end
        if what == 'b' then
          r.blocked = ends - now
        else
          r.limit = what + 0
        end
      end
    end

    -- An overridable rule's decision: the limit in force first (see the reply above), then the decision; a block refuses
    -- with its time left as the wait, touching nothing.
    local function push_overridden(r, allowed, remaining, reset, retry)
      n = n + 1
      reply[n] = r.limit >= BARE and int(r.limit) or r.limit
      if r.blocked then
        n = push(reply, n, r.window, false, 0, r.blocked, r.blocked)
      else
        n = push(reply, n, r.window, allowed, remaining, reset, retry)
      end
    end

    -- The lockout functions (their callers ask them only for a rule with a lockout), made only for a batch that has
    -- such a rule: a script's functions are made anew on every call, a measurable part of a small batch's time.
    local lockout_left, locked_out, lock_out
    if has_lockout then
      -- Rule `r`'s lockout length (µs) at `level`, and the level capped at the first whose length reaches max (what the key
      -- stores). An escalating lockout lasts base × factor^level ms, rounded to the nearest ms, at most max: factor^level
      -- is taken as products, not `^`, whose last bit may differ from V8's (twin: lib/algorithms/lockout.escalation.ts).
      -- At most 100 products: define-rule.ts refuses a rule that needs more to reach max.
      local function lockout_length(r, level)
        if not r.factor then
          return r.block, 0
        end
        local length, i = r.block / 1000, 0
        while i < level and length < r.max do
          length = length * r.factor
          i = i + 1
        end
        return min(floor(length + 0.5), r.max) * 1000, i
      end

      -- The lockout's time left (µs) when rule `r` is locked out, else nil. The lockout key holds when it started and its
      -- level ('start' at level 0, else 'start:level'), kept in r.started and r.level for lock_out. The current rule's
      -- length applies (a shortened one at once); at most that length from now, even if the clock stepped back.
      function lockout_left(r)
        r.started = nil
        local raw = rcall('GET', r.block_key)
        if not raw then
          return nil
        end
        local level = 0
        local colon = string.find(raw, ':', 1, true)
        if colon then
          level = string.sub(raw, colon + 1) + 0
          raw = string.sub(raw, 1, colon - 1)
        end
        r.started, r.level = raw + 0, level
        local length = lockout_length(r, level)
        local left = min(r.started + length - now, length)
        if left > 0 then
          return left
        end
        return nil
      end

      -- A locked-out rule's decision. The algorithm is asked too, writing nothing: the wait reported must also be enough
      -- to pass it then; if it would pass, its state is reported as it is, not as after a charge that is not made.
      function locked_out(r, left)
        local allowed, _, reset, retry = r.algorithm.check(r, now, r.cost, false)
        if allowed then
          allowed, _, reset, retry = r.algorithm.check(r, now, 0, false)
        end
        return false, 0, max(reset, left), retry < 0 and -1 or max(retry, left)
      end

      -- Starts rule `r`'s lockout after a refusal (lockout_left has read its key). An escalating lockout goes one level up
      -- when the previous one ended less than forgetAfter ago, else back to 0; its key lives until forgetAfter after its
      -- end, holding the level that long. The wait is the longer of the lockout and the algorithm's own: waiting the
      -- lockout alone could be refused again, and start another lockout. A rule whose lockout's end restarts the count
      -- (r.restart) deletes its state key here: nothing is charged while locked out, so the end finds a full budget, and
      -- the wait is the lockout's.
      function lock_out(r, reset, retry)
        local level, forget = 0, 0
        if r.factor then
          forget = r.forget
          if r.started and now < r.started + lockout_length(r, r.level) + forget then
            local _
            _, level = lockout_length(r, r.level + 1)
          end
        end
        local length = lockout_length(r, level)
        rcall('SET', r.block_key, level > 0 and int(now) .. ':' .. level or int(now), 'PX', (length + forget) / 1000)
        if r.restart then
          rcall('DEL', r.key)
          return length, retry < 0 and -1 or length
        end
        return max(reset, length), retry < 0 and -1 or max(retry, length)
      end
    end

    -- One rule: it can write as it checks. Its definition's table is used as is: calls are decided one at a time.
    -- `till`: a give-back's instant (see the call arguments above).
    function decide_one(op, r, cost, till)
      take_keys(r, cost)
      if r.override then
        apply_override(r)
      end
      if op == 'r' then
        r.algorithm.refund(r, now, r.cost)
        return
      end
      if op == 'g' then
        -- Past its instant the take's units were counted in a window (or cell) that is over: given back now, they would
        -- be taken off a later one's count, which they never were in.
        if till == 0 or now < till then
          r.algorithm.refund(r, now, r.cost)
        end
        return
      end
      if op == 'l' then
        local lease_end = r.algorithm.lease_end
        local ends = lease_end and lease_end(r, now) or 0
        reply[n + 1] = ends
        reply[n + 2] = ends > 0 and ends - now or 0
        n = n + 2
      end
      if r.blocked then
        push_overridden(r)
        return
      end
      local left = r.block > 0 and lockout_left(r)
      if left then
        if r.override then
          push_overridden(r, locked_out(r, left))
        else
          n = push(reply, n, r.window, locked_out(r, left))
        end
        return
      end
      local allowed, remaining, reset, retry = r.algorithm.check(r, now, r.cost, op == 'c' or op == 'l')
      if op == 'c' and not allowed and r.block > 0 then
        reset, retry = lock_out(r, reset, retry)
      end
      if r.override then
        push_overridden(r, allowed, remaining, reset, retry)
      else
        n = push(reply, n, r.window, allowed, remaining, reset, retry)
      end
    end

    -- Several rules: all are checked before any writes. Each state key appears once (the stores merge repeated
    -- entries into one rule), so the second check of an admitted call sees the state the first saw and admits again.
    -- One definition may serve two of its rules (two trackers), so each rule gets a copy of its own.
    local pool
    function decide_all(call)
      local op, count = call.op, call.n
      pool = pool or {}
      for i = 1, count do
        local r = {}
        for field, value in pairs(call[i]) do
          r[field] = value
        end
        pool[i] = r
        take_keys(r, call.costs[i])
        if r.override then
          apply_override(r)
        end
      end
      if op == 'r' then
        for i = 1, count do
          pool[i].algorithm.refund(pool[i], now, pool[i].cost)
        end
        return
      end
      local decisions, all = {}, true
      for i = 1, count do
        local r = pool[i]
        local left = not r.blocked and r.block > 0 and lockout_left(r)
        local d
        if r.blocked then
          d = { false, 0, r.blocked, r.blocked }
          d.blocked = true
        elseif left then
          d = { locked_out(r, left) }
          d.blocked = true
        else
          d = { r.algorithm.check(r, now, r.cost, false) }
        end
        all = all and d[1]
        decisions[i] = d
      end
      for i = 1, count do
        local r, d = pool[i], decisions[i]
        if op == 'c' and all then
          d = { r.algorithm.check(r, now, r.cost, true) }
        elseif op == 'c' and d[1] then
          -- Nothing was charged: report this rule's state as it is, not as it would have been after the charge.
          d = { r.algorithm.check(r, now, 0, false) }
        elseif op == 'c' and r.block > 0 and not d.blocked then
          d[3], d[4] = lock_out(r, d[3], d[4])
        end
        if r.override then
          push_overridden(r, d[1], d[2], d[3], d[4])
        else
          n = push(reply, n, r.window, d[1], d[2], d[3], d[4])
        end
      end
    end
  end

  -- A run of one key's identical calls ('N=': a hot key's), decided as the calls one by one. For a plain call of an
  -- algorithm with `runs` (see the prelude): one charge of all its units when they fit; else a check for the first,
  -- one charge for the rest admitted and one check for those refused after them, where each call was a read and a
  -- write. Exact because such an algorithm admits a call while the units left cover its cost, and a refusal leaves the
  -- state as it was, so the next call is refused alike; an admitted call's reset is the last one's, or follows from
  -- it. Made only for a batch that has such a run.
  local decide_run

  for i = 6, 5 + call_args do
    local call = parsed[ARGV[i]]
    if call.shared then
      if not decide_run then
        -- The decisions of `count` calls of a run admitted by one charge of `cost` units each, which left `last` units
        -- and replied the reset `at` (and `units`, for an algorithm whose resets follow from it).
        local function push_admitted(r, count, cost, last, at, units)
          local reset_of = r.algorithm.runs
          for j = 1, count do
            local behind = (count - j) * cost
            n = push(reply, n, r.window, true, last + behind, reset_of == true and at or reset_of(r, units, behind), 0)
          end
        end

        function decide_run(run)
          local from = k + 1
          if not (run.plain and run[1].algorithm.runs) then
            -- Each call takes the run's keys again.
            for _ = 1, run.times do
              k = from - 1
              if run.n == 1 then
                decide_one(run.op, run[1], run.cost, run.till)
              else
                decide_all(run)
              end
            end
            return
          end
          local r, cost, apply = run[1], run.cost, run.apply
          local algorithm, window, more = r.algorithm, r.window, run.times - 1
          k = from
          r.key = keys[k]
          if apply then
            -- Most runs fit (a busy key under its limit): all their units in one charge, admitted only if every call
            -- would be; else it refused, leaving the state as it was, and the run is decided as below.
            local fits, last, at, _, units = algorithm.check(r, now, run.times * cost, true)
            if fits then
              push_admitted(r, run.times, cost, last, at, units)
              return
            end
          end
          local allowed, remaining, reset, retry = algorithm.check(r, now, cost, apply)
          n = push(reply, n, window, allowed, remaining, reset, retry)
          if not apply or not allowed then
            -- Peeks, or consumes after a refusal: each decided as the first, the state untouched.
            for _ = 1, more do
              n = push(reply, n, window, allowed, remaining, reset, retry)
            end
            return
          end
          local admitted = min(more, remaining >= cost and (remaining - remaining % cost) / cost or 0)
          if admitted > 0 then
            local _, last, at, _, units = algorithm.check(r, now, admitted * cost, true)
            push_admitted(r, admitted, cost, last, at, units)
          end
          if admitted < more then
            allowed, remaining, reset, retry = algorithm.check(r, now, cost, false)
            for _ = admitted + 1, more do
              n = push(reply, n, window, allowed, remaining, reset, retry)
            end
          end
        end
      end
      decide_run(call)
    elseif call.plain then
      -- What decide_one does for such a call, without its calls and branches: most calls of a batch take this path
      -- (per fixed-window decision of a batch, 17,200 Redis instructions through decide_one, 16,000 here).
      local r, cost, apply, check = call[1], call.cost, call.apply, call[1].algorithm.check
      local window = r.window
      local base = window + 1
      for _ = 1, call.times do
        k = k + 1
        r.key = keys[k]
        local allowed, remaining, reset, retry = check(r, now, cost, apply)
        -- An admission that packs, packed as push does, without the call to push: -2.8% of a batched fixed-window
        -- decision and -2.2% of a token-bucket one (callgrind, 22,601 -> 21,968 and 33,707 -> 32,975 Redis instructions).
        local packed = allowed and remaining >= 0 and reset >= 0 and reset <= window and remaining * base + reset
        if packed and packed < BARE then
          n = n + 1
          reply[n] = packed
        else
          n = push(reply, n, window, allowed, remaining, reset, retry)
        end
      end
    else
      for _ = 1, call.times do
        if call.n == 1 then
          decide_one(call.op, call[1], call.cost, call.till)
        else
          decide_all(call)
        end
      end
    end
  end
  if n == 0 then
    return {}
  end
  return reply
end
