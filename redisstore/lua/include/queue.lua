-- queue.lua: a queue's sets, pushing a job into it, its due hint, and the
-- wake-up tokens and lease-set writes that finalize and claim write late.
--
--!include call.lua
--!include events.lua
--!include fields.lua
--!include job.lua
--!include keyed.lua
--!include ready.lua
--
-- Queue q's keys: q:<q>:l the ready jobs of priority 0 (a list, FIFO;
-- lazy removal: READY.stale), q:<q>:r the ready jobs of other priorities
-- (score (priority + 1000) * 2^40 + push counter), q:<q>:d delayed (score: due ms), q:<q>:a leased (score: lease
-- deadline ms), q:<q>:w wake-up tokens, and q:<q>:s its state, a small
-- hash: w (present once the queue is known; until when a blocked claim may
-- wait on it), p ("1" while paused), n (due hint), k (whether its wake-up
-- list may hold tokens), push (its push counter), c (its concurrency
-- limit, absent for none), rl (its rate limit, rate.lua), kl (its
-- per-key limit, absent for none), K ("1" once it had a keyed job:
-- keyed.lua), z ("1" while q:<q>:r may hold jobs), lt (q:<q>:l's push
-- counter), x (q:<q>:l's stale elements) and et (when the next trim of
-- its ended lists is due: lists.lua). spec/keys.md says more.

local function qkey(q, kind) return P .. 'q:' .. q .. ':' .. kind end

-- READY.state reads queue q's state with one HGETALL and returns it as a
-- table by field name (a field absent nil or false): the state is a small
-- hash, a listpack, whose HMGET of 13 fields scans it for each, absent
-- ones too, and whose reply carries every one of them, where HGETALL
-- carries only those present (some 8,000 instructions less). As a
-- function (Redis only) in RESP3, whose map reply Redis makes the table
-- itself (some 2,500 less again); a script (miniredis too, whose setresp
-- would switch the client's own protocol) in RESP2. RESP2 again before
-- any other command.
function READY.state(q)
  if IS_FUNCTION then
    redis.setresp(3)
    local s = redis.call('HGETALL', qkey(q, 's')).map
    redis.setresp(2)
    return s
  end
  local v = redis.call('HGETALL', qkey(q, 's'))
  -- the constructor sizes the table for the common fields
  local s = {w = false, n = false, k = false, push = false, lt = false, et = false}
  for i = 1, #v, 2 do s[v[i]] = v[i + 1] end
  return s
end

-- qstate returns queue q's state, read once per call (READY.state), or
-- taken from v when the caller read it itself (fast_chain.lua): a table
-- READY.state returned, or an HMGET's reply of w, p, n, k, push, c, rl,
-- kl, K, z, x, lt and et (its [1] false or a string, where READY.state's
-- has none). qs_set changes a field (false: delete it) for qs_flush,
-- which finalize calls; the names changed are kept in the state's s[0] (a
-- number: never a field's name).
local function qstate(q, v)
  local all = bag('qs')
  local s = all[q]
  if not s then
    if not v then
      s = READY.state(q)
    elseif v[1] ~= nil then
      s = {w = v[1], p = v[2], n = v[3], k = v[4], push = v[5], c = v[6], rl = v[7], kl = v[8], K = v[9], z = v[10],
        x = v[11], lt = v[12], et = v[13]}
    else
      s = v
    end
    all[q] = s
  end
  return s
end

local function qs_set(q, f, v)
  local s = qstate(q)
  s[f] = v
  local d = s[0]
  if not d then
    d = {}
    s[0] = d
    -- the changed queues in order, in the bag's array part (names are
    -- its string keys)
    local all = CALL.qs
    all[#all + 1] = q
  end
  d[f] = true
end

-- next_push returns queue q's next push counter, which orders a priority's
-- ready jobs FIFO; at PUSH_MAX it stays there (priority order holds, FIFO
-- among equals is lost: 2,100 years at 100k pushes/s without the queue
-- ever running empty).
local function next_push(q)
  local v = tonumber(qstate(q).push) or 0
  if v < PUSH_MAX then v = v + 1 end
  qs_set(q, 'push', v)
  return v
end

-- reset_push sets queue q's push counter back to 0 when q's ready set is
-- empty and the counter passed PUSH_RESET (written only then, so a queue
-- that runs empty at every claim costs no write for it), and no keyed job
-- is ready (they share the counter).
local function reset_push(q)
  local s = qstate(q)
  if (tonumber(s.push) or 0) > PUSH_RESET and not (s.K and redis.call('EXISTS', qkey(q, 'kr')) == 1) then
    qs_set(q, 'push', 0)
  end
end

local function qs_flush()
  for _, q in ipairs(CALL.qs or EMPTY) do
    local s = CALL.qs[q]
    local set, del = {}, nil
    for f in pairs(s[0]) do
      local v = s[f]
      if v == false then
        del = del or {}
        del[#del + 1] = f
      else
        if type(v) == 'number' then v = fmt(v) end
        set[#set + 1] = f
        set[#set + 1] = v
      end
    end
    if #set > 0 then redis.call('HSET', qkey(q, 's'), unpack(set)) end
    if del then redis.call('HDEL', qkey(q, 's'), unpack(del)) end
  end
end

-- The unkeyed ready set of queue q (spec/keys.md, q:<q>:l): the jobs of
-- priority 0 in the list q:<q>:l, the others in q:<q>:r, which a claim
-- reads only while q's state says z. Its functions live in READY (one
-- top-level local for ready.lua's and these), so that every access to it
-- is here.

-- READY.cut returns the score from which q:<q>:r's members follow the
-- list in claim order: 1000 * 2^40 plus q's push counter. A member of a
-- priority below 0 scores below it (its push count is at most the
-- counter); one above 0 scores at or above it unless 2^40 pushes of
-- q:<q>:r came after its own (the bound spec/keys.md gives for priority
-- order in q:<q>:r).
function READY.cut(q)
  return 1000 * PRIO_UNIT + (tonumber(qstate(q).push) or 0)
end

-- READY.push_ready puts job id of priority pr at the end of q's ready
-- jobs of its priority.
function READY.push_ready(q, pr, id)
  if pr == 0 then
    redis.call('RPUSH', qkey(q, 'l'), id)
    qs_set(q, 'lt', (tonumber(qstate(q).lt) or 0) + 1)
  else
    redis.call('ZADD', qkey(q, 'r'), fmt((pr + 1000) * PRIO_UNIT + next_push(q)), id)
    if not qstate(q).z then qs_set(q, 'z', '1') end
  end
end

-- READY.push_list puts the jobs ids (of priority 0) at the end of q's list
-- in one RPUSH, as push_ready one by one would.
function READY.push_list(q, ids)
  for i = 1, #ids, 1000 do redis.call('RPUSH', qkey(q, 'l'), unpack(ids, i, math.min(i + 999, #ids))) end
  qs_set(q, 'lt', (tonumber(qstate(q).lt) or 0) + #ids)
end

-- READY.fresh returns the IDs of ids, elements just popped from q's list
-- in order, without the stale ones: of an ID with a count k in q:<q>:lx,
-- the first k are stale (its oldest), dropped here and taken off the
-- counts (lx and the state's x).
function READY.fresh(q, ids)
  local lk = qkey(q, 'lx')
  local c = redis.call('HMGET', lk, unpack(ids))
  local out, left, changed = {}, {}, {}
  local x = tonumber(qstate(q).x) or 0
  for i, id in ipairs(ids) do
    local k = left[id]
    if k == nil then k = tonumber(c[i]) or 0 end
    if k > 0 then
      if left[id] == nil then changed[#changed + 1] = id end
      left[id] = k - 1
      x = x - 1
    else
      left[id] = 0
      out[#out + 1] = id
    end
  end
  local set, del = {}, {}
  for _, id in ipairs(changed) do
    if left[id] > 0 then
      set[#set + 1] = id
      set[#set + 1] = fmt(left[id])
    else
      del[#del + 1] = id
    end
  end
  if #set > 0 then redis.call('HSET', lk, unpack(set)) end
  if #del > 0 then redis.call('HDEL', lk, unpack(del)) end
  qs_set(q, 'x', x > 0 and x or false)
  return out
end

-- READY.pop takes up to want of queue q's unkeyed ready jobs out, in claim
-- order: q:<q>:r's members of a priority below 0 (only while z), then the
-- list, then the rest of q:<q>:r (only while z; READY.cut). Returns their IDs (stale
-- elements dropped: fewer than want does not mean empty) and whether q
-- has no unkeyed ready job left; clears z when it found q:<q>:r empty.
function READY.pop(q, want)
  local s = qstate(q)
  local got, rk = {}, nil
  if s.z then
    rk = qkey(q, 'r')
    got = redis.call('ZRANGEBYSCORE', rk, '-inf', '(' .. fmt(READY.cut(q)), 'LIMIT', '0', fmt(want))
    if #got > 0 then redis.call('ZREM', rk, unpack(got)) end
    if #got == want then return got, false end
  end
  local k = want - #got
  local l = redis.call('LPOP', qkey(q, 'l'), fmt(k))
  local lk = l and #l or 0
  if lk > 0 then
    if s.x then l = READY.fresh(q, l) end
    if #got == 0 then
      got = l
    else
      for _, id in ipairs(l) do got[#got + 1] = id end
    end
  end
  if lk == k then return got, false end
  if s.x then
    -- the list ran empty: no stale element is left (the counts agree
    -- unless something else wrote them)
    redis.call('DEL', qkey(q, 'lx'))
    qs_set(q, 'x', false)
  end
  if not rk then return got, true end
  k = want - #got
  local hi = redis.call('ZRANGEBYSCORE', rk, fmt(READY.cut(q)), '+inf', 'LIMIT', '0', fmt(k))
  if #hi > 0 then
    redis.call('ZREM', rk, unpack(hi))
    for _, id in ipairs(hi) do got[#got + 1] = id end
  end
  if #hi < k then
    qs_set(q, 'z', false)
    return got, true
  end
  return got, false
end

-- READY.stale records that job id, ready in q's list, left the queue
-- otherwise than by a claim: its element stays (removing it would scan
-- the list), counted in q:<q>:lx and the state's x; a removal that leaves
-- only stale elements deletes the list instead.
function READY.stale(q, id)
  local x = (tonumber(qstate(q).x) or 0) + 1
  if redis.call('LLEN', qkey(q, 'l')) <= x then
    redis.call('DEL', qkey(q, 'l'), qkey(q, 'lx'))
    qs_set(q, 'x', false)
  else
    redis.call('HINCRBY', qkey(q, 'lx'), id, '1')
    qs_set(q, 'x', x)
  end
end

-- READY.count returns the number of q's unkeyed ready jobs.
function READY.count(q)
  local s = qstate(q)
  local n = redis.call('LLEN', qkey(q, 'l')) - (tonumber(s.x) or 0)
  if s.z then n = n + redis.call('ZCARD', qkey(q, 'r')) end
  return n
end

-- register_queue makes q known: in the queues hash and in its state.
local function register_queue(q)
  if qstate(q).w then return end
  redis.call('HSETNX', K_QUEUES, q, '0')
  qs_set(q, 'w', '0')
  bag('wake_new')[q] = true
end

-- note_due lowers queue q's due hint (its state's n) to t when the hint
-- is known and later. The hint is a time before which no lease of q ends
-- and no delayed job of q falls due ("none": both sets were empty; absent:
-- unknown); a sweep that finds it ahead of now reads nothing.
local function note_due(q, t)
  local h = qstate(q).n
  if h and (h == 'none' or t < tonumber(h)) then qs_set(q, 'n', t) end
end

-- wake asks finalize for n wake-up tokens on q; wake_clear for clearing
-- q's wake-up list instead (a claim left it empty, or it is paused).
local function wake(q, n)
  local w = bag('wake')
  if not w[q] then
    w[q] = 0
    -- the queues in order, in the bag's array part
    w[#w + 1] = q
  end
  w[q] = w[q] + n
end

local function wake_clear(q)
  bag('wake_del')[q] = true
  local w = CALL.wake
  if w and w[q] then w[q] = 0 end
end

-- push puts job j into its queue: delayed until ra when ra is after now,
-- else ready (and listed in fx.pushed); either asks for a wake-up token. The caller has stored or cleared
-- j's F_RUN_AT, and writes its state itself when later is true
-- (set_job_state) and its ready-at (add_ready) when later is true. rd is
-- j's ready-at as mark_ready stores it: nil for the time it is ready
-- (now, or ra when later), true to keep the one it has (a sweep readies
-- a job due since its ready-at), or a promotion's (promotion_ready). It
-- records the job's queued event (events.lua), unless j.rq says that its
-- caller records another.
local function push(j, ra, fx, later, rd)
  set_job_state(j, 'queued', later)
  if rd == nil then rd = fmt(math.max(ra, NOW)) end
  if rd ~= true then
    if later then j.rd = rd else READY.mark_ready(j, rd) end
  end
  local q, pr = j.q, j.pr
  if not pr then q, pr = job_attr(j) end
  register_queue(q)
  local id = job_id(j)
  -- a job queued again after an attempt has its event from settle.lua
  -- (retried), a due delayed job (rd true) none: it was queued already
  if j.rq then
    j.rq = nil
  elseif rd ~= true then
    EV.add('queued', id, 0, '')
  end
  if ra > NOW then
    redis.call('ZADD', qkey(q, 'd'), fmt(ra), id)
    note_due(q, ra)
    -- a claim blocked on q wakes to wait only until this job is due
    wake(q, 1)
    return
  end
  local ck = KEYED.job_ckey(j)
  if ck then
    local s = qstate(q)
    if not s.K then qs_set(q, 'K', '1') end
    KEYED.keyed_push(q, ck, id, fmt((pr + 1000) * PRIO_UNIT + next_push(q)), s.kl)
  else
    READY.push_ready(q, pr, id)
  end
  wake(q, 1)
  local p = fx.pushed
  if not p then
    p = {}
    fx.pushed = p
  end
  p[#p + 1] = id
  p[#p + 1] = q
end

-- unqueue takes a queued job (or an open signal task) out of its ready or
-- delayed set; a ready job of priority 0 leaves its list lazily
-- (READY.stale).
local function unqueue(j)
  local q, id = job_queue(j), job_id(j)
  local ck = KEYED.job_ckey(j)
  if ck then
    if not KEYED.keyed_unqueue(q, ck, id) then redis.call('ZREM', qkey(q, 'd'), id) end
    return
  end
  if redis.call('ZREM', qkey(q, 'd'), id) == 1 then return end
  -- due, taken out of the delayed set by this call's sweep and not pushed
  -- yet (sweep.lua): in no set
  local tr = CALL.transit
  if tr and tr[id] then return end
  -- an open signal task is in no ready set (a cancel's drain calls this
  -- after the task's state changed: its spec says what it is)
  if j.kind == 't' and string.find(string.match(job_spec(j), '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|([^|:]*)') or '', 'S', 1, true) then
    return
  end
  local _, pr = job_attr(j)
  if pr ~= 0 then
    redis.call('ZREM', qkey(q, 'r'), id)
  else
    READY.stale(q, id)
  end
end

-- key_release frees the key slot of job j, whose lease ended (a job
-- without a key has none); a key that leaves the parked keys asks for a
-- wake-up token.
local function key_release(j)
  local ck = KEYED.job_ckey(j)
  if not ck then return end
  local q = job_queue(j)
  if KEYED.keyed_release(q, ck, qstate(q).kl) then wake(q, 1) end
end

-- Lease-set writes of many jobs are gathered per queue and written in one
-- ZREM and one ZADD: active_remove_later and active_add_later gather,
-- active_flush(q) writes q's (removals first), before any read of the set
-- and at the end of the call.
--
-- The lease set's sentinel (spec/keys.md, q:<q>:a): a ZADD of two leases
-- or more also writes the member READY.A_MEMBER, 65 '~', scored
-- READY.A_SCORE (2^53 - 1, after every lease deadline): longer than
-- Redis's default zset-max-listpack-value, it keeps the set a skiplist,
-- whose inserts and removals cost the same however many leases it holds,
-- where a listpack is searched from its start for each. Every reader of
-- the set reads below READY.A_BELOW (the scores of leases only) or counts
-- with READY.active_count. (Fields of READY, not locals: the library's top
-- level has few registers left.)
READY.A_MEMBER = '~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~'
READY.A_SCORE = '9007199254740991'
READY.A_BELOW = '(9007199254740991'

-- READY.active_count returns the number of leases in queue q's lease set
-- (its sentinel not counted).
function READY.active_count(q)
  return redis.call('ZCOUNT', qkey(q, 'a'), '-inf', READY.A_BELOW)
end

local function active_flush(q)
  local rm = CALL.arm and CALL.arm[q]
  if rm then
    CALL.arm[q] = nil
    for i = 1, #rm, 1000 do redis.call('ZREM', qkey(q, 'a'), unpack(rm, i, math.min(i + 999, #rm))) end
  end
  local add = CALL.aadd and CALL.aadd[q]
  if add then
    CALL.aadd[q] = nil
    -- the list starts with the sentinel (active_later), written with two
    -- leases or more, first, so that a new set is a skiplist from its
    -- first insert
    local from = #add > 4 and 1 or 3
    for i = from, #add, 1000 do redis.call('ZADD', qkey(q, 'a'), unpack(add, i, math.min(i + 999, #add))) end
  end
end

-- active_later returns queue q's list of lease-set writes of kind arm
-- (IDs to remove) or aadd (deadline and ID pairs to add, after the
-- sentinel's pair), made on first use.
local function active_later(kind, q)
  local per = bag(kind)
  local list = per[q]
  if not list then
    list = kind == 'aadd' and {READY.A_SCORE, READY.A_MEMBER} or {}
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

local function active_add_later(q, deadline_s, id)
  local list = active_later('aadd', q)
  list[#list + 1] = deadline_s
  list[#list + 1] = id
end

-- active_flush_all writes every queue's gathered lease-set writes.
local function active_flush_all()
  for _, q in ipairs(CALL.aq or EMPTY) do active_flush(q) end
end
