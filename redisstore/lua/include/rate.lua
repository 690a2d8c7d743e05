-- rate.lua: a queue's rate limit, at most n starts (leases) in any window
-- of a period, enforced inside claim (spec/states.md, RateLimitQueue).
--
--!include call.lua
--!include queue.lua
--
-- The limit is field rl of the queue's state, "<n>:<period ms>", absent
-- for none, and ":<ms>" after it once a claim found the limit refusing
-- ready jobs: the time the next start is allowed, before which pushes
-- write no wake-up tokens (no claim could take the job). The starts that
-- may still count are the sorted set q:<q>:starts, score the start's time
-- (ms), member its lease token (unique), kept for one period after the
-- last start (PEXPIRE; kept with a test clock). One table holds the
-- functions (one top-level local of the library).

local RATE = {}

-- RATE.limit returns queue state qs's limit and period (ms), or nil.
function RATE.limit(qs)
  local n, per = string.match(qs.rl, '^(%d+):(%d+)')
  return tonumber(n), tonumber(per)
end

-- RATE.room drops queue q's starts older than the period and returns how
-- many more the limit lets start now, and how many it counts.
function RATE.room(q, qs)
  local n, per = RATE.limit(qs)
  local k = qkey(q, 'starts')
  redis.call('ZREMRANGEBYSCORE', k, '-inf', fmt(NOW - per))
  local have = redis.call('ZCARD', k)
  return math.max(0, n - have), have
end

-- RATE.started logs the last took leases of this call (bag leased: id,
-- token pairs in order) as starts of queue q now (had: the starts counted
-- before); when the limit then lets none more start and q still has ready
-- jobs (empty: the claim found its ready set empty), it keeps the time the
-- next start is allowed for next_due (CALL.rate_due) and in rl, and clears
-- q's wake-up list: no claim can take from q before then, and every claim
-- the limit refuses learns that time.
function RATE.started(q, qs, took, had, empty)
  local n, per = RATE.limit(qs)
  local k = qkey(q, 'starts')
  if took > 0 then
    local leased = bag('leased')
    local args = {}
    for i = #leased - 2 * took + 2, #leased, 2 do
      args[#args + 1] = NOW_S
      args[#args + 1] = leased[i]
    end
    for i = 1, #args, 1000 do redis.call('ZADD', k, unpack(args, i, math.min(i + 999, #args))) end
    -- the server's clock expires the key; a test clock's time need not
    -- follow it, so the key then stays (claims trim it)
    if TEST_NOW == '' then redis.call('PEXPIRE', k, fmt(per)) end
  end
  local have = had + took
  if empty or have < n or (READY.count(q) == 0 and redis.call('EXISTS', qkey(q, 'kr')) == 0) then return end
  -- the oldest start that must leave the window for one more to fit
  local r = redis.call('ZRANGE', k, fmt(have - n), fmt(have - n), 'WITHSCORES')
  local due = tonumber(r[2]) + per
  bag('rate_due')[q] = due
  wake_clear(q)
  local rl = fmt(n) .. ':' .. fmt(per) .. ':' .. fmt(due)
  if qs.rl ~= rl then qs_set(q, 'rl', rl) end
end

-- RATE.held reports whether queue q's rate limit refuses every start now
-- (a claim found it so, until the time kept in rl): a push then writes no
-- wake-up token for it.
function RATE.held(q)
  local rl = qstate(q).rl
  local t = rl and string.match(rl, '^%d+:%d+:(%d+)$')
  return t ~= nil and tonumber(t) > NOW
end

-- RATE.due returns the time the limit next lets queue q start a job, when
-- this call's claim found it refusing with jobs ready, else 0.
function RATE.due(q)
  local d = CALL.rate_due
  return d and d[q] or 0
end
