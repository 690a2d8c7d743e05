-- queue.lua: a queue's sets, pushing a job into it, its due hint, and the
-- wake-up tokens and lease-set writes that finalize and claim write late.
--
--!include call.lua
--!include fields.lua
--!include job.lua
--
-- Queue q's keys: q:<q>:r ready (score (priority + 1000) * 2^40 + push
-- counter), q:<q>:d delayed (score: due ms), q:<q>:a leased (score: lease
-- deadline ms), q:<q>:w wake-up tokens. Its seq-hash fields: w:<q> (present
-- once the queue is known; until when a blocked claim may wait on it),
-- p:<q> ("1" while paused), n:<q> (due hint), k:<q> (whether its wake-up
-- list may hold tokens). spec/keys.md says more.

local function qkey(q, kind) return P .. 'q:' .. q .. ':' .. kind end

-- register_queue makes q known: in the queues hash and in the seq hash.
local function register_queue(q)
  if seq_get('w:' .. q) then return end
  redis.call('HSETNX', K_QUEUES, q, '0')
  seq_set('w:' .. q, '0')
  bag('wake_new')[q] = true
end

-- note_due lowers queue q's due hint (seq field n:<q>) to t when the hint
-- is known and later. The hint is a time before which no lease of q ends
-- and no delayed job of q falls due ("none": both sets were empty; absent:
-- unknown); a sweep that finds it ahead of now reads nothing.
local function note_due(q, t)
  local h = seq_get('n:' .. q)
  if h and (h == 'none' or t < tonumber(h)) then seq_set('n:' .. q, t) end
end

-- wake asks finalize for n wake-up tokens on q; wake_clear for clearing
-- q's wake-up list instead (a claim left it empty, or it is paused).
local function wake(q, n)
  local w = bag('wake')
  if not w[q] then
    w[q] = 0
    local order = bag('wakeq')
    order[#order + 1] = q
  end
  w[q] = w[q] + n
end

local function wake_clear(q)
  bag('wake_del')[q] = true
  local w = CALL.wake
  if w and w[q] then w[q] = 0 end
end

-- push puts job j into its queue: delayed until ra when ra is after now,
-- else ready (and listed in fx.pushed). The caller has stored or cleared
-- j's F_RUN_AT; hs, when given, gathers the state field for the caller to
-- write (set_job_state).
local function push(j, ra, fx, hs)
  set_job_state(j, 'queued', hs)
  local q, pr = job_attr(j)
  register_queue(q)
  local id = job_id(j)
  if ra > NOW then
    redis.call('ZADD', qkey(q, 'd'), ra, id)
    note_due(q, ra)
    return
  end
  redis.call('ZADD', qkey(q, 'r'), (pr + 1000) * PRIO_UNIT + seq_next('push'), id)
  wake(q, 1)
  local p = fx.pushed
  p[#p + 1] = id
  p[#p + 1] = q
end

-- unqueue takes a queued job out of its ready or delayed set.
local function unqueue(j)
  local q, id = job_queue(j), job_id(j)
  if redis.call('ZREM', qkey(q, 'r'), id) == 0 then redis.call('ZREM', qkey(q, 'd'), id) end
end

-- Lease-set writes of many jobs are gathered per queue and written in one
-- ZREM and one ZADD: active_remove_later and active_add_later gather,
-- active_flush(q) writes q's (removals first), before any read of the set
-- and at the end of the call.
local function active_flush(q)
  local rm = CALL.arm and CALL.arm[q]
  if rm then
    CALL.arm[q] = nil
    for i = 1, #rm, 1000 do redis.call('ZREM', qkey(q, 'a'), unpack(rm, i, math.min(i + 999, #rm))) end
  end
  local add = CALL.aadd and CALL.aadd[q]
  if add then
    CALL.aadd[q] = nil
    for i = 1, #add, 1000 do redis.call('ZADD', qkey(q, 'a'), unpack(add, i, math.min(i + 999, #add))) end
  end
end

local function active_later(kind, q)
  local per = bag(kind)
  local list = per[q]
  if not list then
    list = {}
    per[q] = list
    local order = bag('aq')
    if not order[q] then
      order[q] = true
      order[#order + 1] = q
    end
  end
  return list
end

local function active_remove_later(q, id)
  local list = active_later('arm', q)
  list[#list + 1] = id
end

local function active_add_later(q, deadline, id)
  local list = active_later('aadd', q)
  list[#list + 1] = deadline
  list[#list + 1] = id
end

-- active_flush_all writes every queue's gathered lease-set writes.
local function active_flush_all()
  for _, q in ipairs(CALL.aq or {}) do active_flush(q) end
end
