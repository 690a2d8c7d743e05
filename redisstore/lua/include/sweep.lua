-- sweep.lua: a queue's overdue leases and due delayed jobs.
--
--!include call.lua
--!include job.lua
--!include queue.lua
--!include settle.lua
--!include signal_end.lua
--!include cancel.lua

-- due_until reads the first max + 1 members of sorted set k (scored
-- below top when given: a lease set's sentinel is not read, queue.lua)
-- with their scores and returns those due by now (at most max), the score
-- of the first one not taken (nil when there is none), and the scores
-- (strings) of those taken.
local function due_until(k, max, top)
  local r = redis.call('ZRANGEBYSCORE', k, '-inf', top or '+inf', 'WITHSCORES', 'LIMIT', '0', fmt(max + 1))
  local due, at = {}, {}
  for x = 1, #r, 2 do
    local t = tonumber(r[x + 1])
    if t > NOW or #due == max then return due, t, at end
    due[#due + 1] = r[x]
    at[#at + 1] = r[x + 1]
  end
  return due, nil, at
end

-- sweep ends q's overdue leases (within the job's expiry budget it is
-- queued again at once, else its attempt failed; "lease_expired" either way),
-- then makes its due delayed jobs ready, each in (time, ID) order and at
-- most max of each. res, when given, collects {expired = {Settled...},
-- due = {id, queue, ...}}. It reads nothing while q's due hint lies ahead
-- of now, and stores the next hint after a sweep. max_leases and max_due,
-- when given, bound the leases and the delayed jobs instead (a sweep going
-- on from an earlier call that stopped; res.n counts the leases ended and
-- res.d the delayed jobs handled).
local function sweep(q, max, res, max_leases, max_due)
  local h = qstate(q).n
  if h and (h == 'none' or tonumber(h) > NOW) then return end
  local ak = qkey(q, 'a')
  active_flush(q)
  local due, na = due_until(ak, max_leases or max, READY.A_BELOW)
  for _, id in ipairs(due) do
    local j = load_job(id)
    if j and job_state(j) == 'running' then
      local a, cr, xp = jget(j, F_ATTEMPT, F_CANCEL, F_EXPIRIES)
      j.att, j.cr = tonumber(a) or 0, cr == '1'
      xp = tonumber(xp) or 0
      local s
      if not j.cr and xp < job_max_expiries(j) then
        -- within its expiry budget: queued again at once, not counted
        s = requeue_expired(j, xp)
      else
        s = settle(j, 'failed', nil, 'lease_expired', false, '0')
      end
      if res then
        res.expired[#res.expired + 1] = s
        res.n = (res.n or 0) + 1
      end
      -- its cascade ran out of the call's budget: the rest of the sweep
      -- waits for another call
      if CALL.stopped then return end
    else
      redis.call('ZREM', ak, id)
    end
  end
  active_flush(q)
  local dk = qkey(q, 'd')
  local nd, at
  max = max_due or max
  due, nd, at = due_until(dk, max)
  -- leases taken and jobs delayed later in this call lower it again
  if na and nd then
    qs_set(q, 'n', math.min(na, nd))
  elseif na or nd then
    qs_set(q, 'n', na or nd)
  else
    qs_set(q, 'n', 'none')
  end
  -- at most max handled, in order: one handled can end one taken after it
  -- (a signal task's timeout failing its workflow fast cancels another
  -- open one), which is skipped, and the room it leaves is taken from the
  -- set again (at most twice more), as the model takes one at a time
  local handled = 0
  for pass = 1, 3 do
    for i = 1, #due, 1000 do redis.call('ZREM', dk, unpack(due, i, math.min(i + 999, #due))) end
    -- out of the delayed set and in no ready set until handled below: a
    -- cancel that one of them starts (a deadline) finds the others here,
    -- so that unqueue counts no stale list element for them (queue.lua)
    local transit = {}
    for _, id in ipairs(due) do transit[id] = true end
    CALL.transit = transit
    local skipped, left = 0, 0
    for i, id in ipairs(due) do
      transit[id] = nil
      if CALL.stopped then
        -- a timeout's or a deadline's cascade ran out of the call's
        -- budget: the rest go back as they were, for the call that goes on after the drain
        redis.call('ZADD', dk, at[i], id)
        note_due(q, tonumber(at[i]))
        left = left + 1
      elseif string.sub(id, -10) == CANCEL.SUFFIX then
        -- a workflow's deadline (cancel.lua)
        if not CANCEL.deadline(id, string.sub(id, 1, -11), res) then skipped = skipped + 1 end
      else
        local j = load_job(id)
        local st = j and job_state(j)
        if st == 'queued' then
          jdel(j, F_RUN_AT)
          local fx = {}
          push(j, 0, fx, nil, true)
          if res and fx.pushed then append(res.due, fx.pushed) end
        elseif st == 'open' then
          -- a signal task's timeout (signal_end.lua)
          SIG.timeout(j, res)
        else
          skipped = skipped + 1
        end
      end
    end
    CALL.transit = nil
    handled = handled + #due - skipped - left
    if res then res.d = handled end
    if skipped == 0 or handled >= max or CALL.stopped or pass == 3 then return end
    due, nd, at = due_until(dk, max - handled)
    if #due == 0 then return end
  end
end
