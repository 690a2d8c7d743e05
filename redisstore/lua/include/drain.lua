-- drain.lua: going on with a cascade that an earlier call left in P work
-- (cascade.lua, save_work) when it ran out of its budget, or with the
-- roots of a submit that did (push_roots).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include queue.lua
--!include cascade.lua
--!include cancel.lua

-- push_roots pushes the roots of workflow w listed in s ("i,i,...", each
-- possibly marked as promote.lua's SIG.root reads) from
-- byte sp, in that order, one unit of BUDGET each; when the budget runs
-- out it keeps the rest in P work (k "r") and stops the call, as a
-- cascade does.
local function push_roots(w, s, sp, fx)
  while true do
    local a, b, v = string.find(s, '([^,]+)', sp)
    if not a then return end
    if BUDGET <= 0 then
      keep_work('k', 'r', 'w', w.id, 'l', string.sub(s, a))
      return
    end
    BUDGET = BUDGET - 1
    SIG.root(w, v, fx)
    sp = b + 1
  end
end

-- unqueue_rest takes the tasks of workflow w listed in s ("i,i,...": a
-- cancel ended them) out of their queues, then writes the events of the
-- cancel from ev ("x:o", CANCEL.events; "" for none) for state byte cb,
-- one unit of BUDGET each, keeping the rest in P work (k "q") when the
-- budget runs out; then decides the workflow's end when no task of it is
-- left (as the cancel would have).
local function unqueue_rest(w, s, fx, ev, cb)
  local sp = 1
  while true do
    local a, b, v = string.find(s, '(%d+)', sp)
    if not a then break end
    if BUDGET <= 0 then
      keep_work('k', 'q', 'w', w.id, 'l', string.sub(s, a), 'e', ev, 'b', cb)
      return
    end
    BUDGET = BUDGET - 1
    local j = task_job(w, tonumber(v), v)
    unqueue(j)
    jdel(j, F_RUN_AT)
    sp = b + 1
  end
  local x, o = string.match(ev, '^(%d+):(%d+)$')
  if x then
    ev = CANCEL.events(w, cb, tonumber(x), tonumber(o))
    if ev then
      keep_work('k', 'q', 'w', w.id, 'l', '', 'e', ev, 'b', cb)
      return
    end
  end
  if tonumber(wget(w, W_REMAINING)) == 0 then tasks_all_ended(w, fx) end
end

-- drain_work goes on with the kept cascade within the call's budget,
-- collecting what it pushes, cancels and ends in fx; when it finishes, P
-- work and the seq hash's pend go. The Settled kept for the finish that
-- started the cascade gets what this part pushed and the workflow's state
-- (and its end), so that a repeat of that finish returns what the whole
-- cascade did. Returns the workflow, or nil when it is gone.
local function drain_work(fx)
  local key = P .. 'work'
  local v = redis.call('HMGET', key, 'w', 'o', 'h', 'l', 'f', 'k', 'e', 'b')
  local w = v[1] and load_wf(v[1])
  local k, pos = string.match(v[3] or '', '^(%d+):(%d+)$')
  local origin = v[2] ~= '' and v[2] or nil
  PENDING = false
  if w and v[6] == 'r' then
    push_roots(w, v[4] or '', 1, fx)
  elseif w and v[6] == 'q' then
    if wget(w, W_STATE) == 'running' then unqueue_rest(w, v[4] or '', fx, v[7] or '', v[8] or 'W') end
  elseif w and v[6] == 'u' then
    if k and wget(w, W_STATE) == 'compensating' then compensation_step(w, tonumber(k), tonumber(pos), fx, origin) end
  elseif w and k and not wf_ended_state(wget(w, W_STATE)) then
    local tail = v[4]
    if tail == '' then tail = nil end
    cascade(w, tonumber(k), tonumber(pos), tail, {}, 0, origin, fx, tonumber(v[5]))
  end
  if not PENDING then
    redis.call('DEL', key)
    redis.call('HDEL', K_SEQ, 'pend')
  end
  if w and origin and (fx.pushed or fx.wf_ended) then
    -- the kept Settled is "tok state runAt wfState ended[ id queue]...":
    -- its workflow state and end are rewritten and this call's pushes
    -- appended, without reading the pushes already there (a wide fan-out
    -- keeps thousands: decoding them in every call made the last calls of
    -- its cascade the slowest)
    local f = origin .. F_LAST_SETTLED
    local ls = redis.call('HGET', w.key, f)
    local cuts, p = {}, 0
    for x = 1, 5 do
      p = ls and string.find(ls, ' ', p + 1, true)
      if not p then break end
      cuts[x] = p
    end
    if cuts[4] then
      local ended = string.sub(ls, cuts[4] + 1, (cuts[5] or (#ls + 1)) - 1) == '1' or fx.wf_ended
      local st = wget(w, W_STATE)
      local new = string.sub(ls, 1, cuts[3]) .. (st == '' and '-' or st) .. (ended and ' 1' or ' 0')
      if cuts[5] then new = new .. string.sub(ls, cuts[5]) end
      if fx.pushed then new = new .. ' ' .. join(fx.pushed, ' ') end
      redis.call('HSET', w.key, f, new)
    end
  end
  return w
end

-- drain_first lets a write call that could start a cascade go on with the
-- one left by an earlier call first; returns whether it found none, so
-- that the call may do its own work. A call that drained does no more:
-- it finalizes and answers PENDING (redisstore.Store drains what is left and
-- sends it again), so that none of its own early returns can skip the
-- finalize that writes what the drain did.
local function drain_first()
  if not PENDING then return true end
  drain_work({})
  return false
end

-- PENDING_REPLY is the error of a call that drain_first refused.
local PENDING_REPLY = 'PENDING a cascade left by an earlier call is still being finished'
