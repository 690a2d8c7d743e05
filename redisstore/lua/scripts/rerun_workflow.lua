-- weir3_rerun_workflow: Runs the failed part of a workflow that ended
-- failed, cancelled or completed again (spec/states.md, RerunWorkflow):
-- every failed or cancelled task and every task downstream of one is
-- reset to waiting
-- (its attempts, lease expiries, run-at, lease, cancel, result, error,
-- end, last finish, signal and ready-at cleared; progress and checkpoint
-- kept) with its open count set to its reset dependencies, and those with
-- none are pushed (or opened, or delayed) in plan order as a submit
-- pushes its roots; completed tasks not downstream of a reset one keep
-- theirs. The workflow is running again under its next run number, its
-- end, removal time and cancel, FailFast and failure flags cleared, and
-- its deadline marker put back when the deadline is still ahead.
-- Everything is checked before the first write.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  workflow ID (validated in Go)
-- Reply:   run, nReset, name*, nPushed, (id, queue)*, then "P" when it
--          pushed its budget of tasks and left the rest to drain calls
-- Errors:  NOTFOUND; NOTRERUNNABLE <state> <run> (the 2nd and 3rd words
--          are the workflow's state and run): running, compensating or
--          compensated, no task failed or was cancelled, or submitted
--          before re-runs
--          (no "rk" field); PENDING (drain.lua: drain, then send the call
--          again)
--
--!include call.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include reply.lua
--!include drain.lua
--!include promote.lua
--!include deadline.lua
--!include finalize.lua

-- RERUN.MARKS is the workflow field of its tasks' push marks (spec/keys.md,
-- rk); RERUN.FIELDS are the task job fields a reset clears.
local RERUN = {MARKS = 'rk', FIELDS = {F_ATTEMPT, F_EXPIRIES, F_RUN_AT, F_TOKEN, F_DEADLINE, F_CANCEL, F_RESULT, F_ERROR,
  F_ENDED, F_LAST_SETTLED, F_SIGNAL, F_READY, F_DEP_FAILED, 'w', 'ah'},
  -- the workflow fields a re-run clears
  WFIELDS = {W_REASON, W_ENDED, W_EXPIRES, W_UNABSORBED, W_FAILED_BEFORE_CANCEL, W_FAIL_FAST_FIRED, W_CANCEL,
    W_CANCEL_UNDO, W_CANCEL_AT, W_UNDOS_REMAINING, W_UNDO_FAILED, CANCEL.HIT}}

begin(KEYS, ARGV)
read_clock()
deny_full()
if not drain_first() then
  finalize()
  return redis.error_reply(PENDING_REPLY)
end
local id = ARGV[4]
local w = load_wf(id)
if not w then return redis.error_reply('NOTFOUND workflow "' .. id .. '"') end
local st = wget(w, W_STATE)
local run = tonumber(wget(w, WEBHOOK.RUN) or '1')
local function refuse(why)
  return redis.error_reply('NOTRERUNNABLE ' .. st .. ' ' .. fmt(run) .. ' workflow "' .. id .. '" ' .. why)
end
if st ~= 'failed' and st ~= 'cancelled' and st ~= 'completed' then return refuse('is ' .. st) end
-- the push marks of its tasks, as a submit lists its roots ("<i><mark>",
-- only the tasks that have one): written by submit since re-runs exist
local marks = wget(w, RERUN.MARKS)
if not marks then return refuse('was submitted by a version without re-runs') end
local n = tonumber(wget(w, W_TASKS))
local S = states_read(w)
-- every task's dependencies, 1,000 fields a read
local dps = {}
for a = 1, n, 1000 do
  local fs = {}
  for i = a, math.min(a + 999, n) do fs[#fs + 1] = 't' .. fmt(i) .. '.' .. F_DEPS end
  append(dps, redis.call('HMGET', w.key, unpack(fs)))
end
-- the cancelled tasks' errors, 1,000 a read: a catch that did not run
-- because nothing failed (no_failure) is not a failed part
local nofail = {}
local xs = {}
local function read_errors()
  if #xs == 0 then return end
  local fs = {}
  for _, i in ipairs(xs) do fs[#fs + 1] = 't' .. fmt(i) .. '.' .. F_ERROR end
  local es = redis.call('HMGET', w.key, unpack(fs))
  for x, i in ipairs(xs) do nofail[i] = es[x] == 'no_failure' end
  xs = {}
end
for i = 1, n do
  if string.byte(S, i) == 120 then -- 'x', cancelled
    xs[#xs + 1] = i
    if #xs == 1000 then read_errors() end
  end
end
read_errors()
-- reset[i]: task i failed or was cancelled, or depends on such a task;
-- open[i]: its reset dependencies
-- (found through the dependents, built here from the dependencies: with
-- tasks added at run time a gated task depends on tasks after it)
local reset, open, k = {}, {}, 0
local dependents, todo = {}, {}
for i = 1, n do
  if dps[i] then
    for d in string.gmatch(dps[i], '%d+') do
      local x = tonumber(d)
      local l = dependents[x]
      if not l then
        l = {}
        dependents[x] = l
      end
      l[#l + 1] = i
    end
  end
  if string.find('fxWD', string.sub(S, i, i), 1, true) ~= nil and not nofail[i] then
    reset[i] = true
    todo[#todo + 1] = i
  end
end
while #todo > 0 do
  local x = table.remove(todo)
  for _, d in ipairs(dependents[x] or EMPTY) do
    if not reset[d] then
      reset[d] = true
      todo[#todo + 1] = d
    end
  end
end
for i = 1, n do
  if reset[i] then
    local o = 0
    for d in string.gmatch(dps[i] or '', '%d+') do
      if reset[tonumber(d)] then o = o + 1 end
    end
    open[i] = o
    k = k + 1
  end
end
if k == 0 then return refuse('has no failed or cancelled task') end

-- writes
local m = wf_member(w)
redis.call('ZREM', K_EXPIRY, 'w:' .. st .. ':' .. m)
set_wf_state(w, 'running')
redis.call('HDEL', w.key, unpack(RERUN.WFIELDS))
for _, f in ipairs(RERUN.WFIELDS) do w.m[f] = false end
run = run + 1
redis.call('HSET', w.key, W_REMAINING, fmt(k), WEBHOOK.RUN, fmt(run))
w.m[W_REMAINING] = fmt(k)
w.m[WEBHOOK.RUN] = fmt(run)
-- the removal time its end gave its keys (server clock)
redis.call('PERSIST', w.key)
redis.call('PERSIST', w.pkey)
redis.call('PERSIST', w.skey)
redis.call('PERSIST', wf_ikey(w))
EV.add('workflow_rerun', id, 0, fmt(run))
local del, opens = {}, {}
local function flush_del(all)
  if #del >= 1000 or (all and #del > 0) then
    redis.call('HDEL', w.key, unpack(del))
    del = {}
  end
  if #opens >= 1000 or (all and #opens > 0) then
    redis.call('HSET', w.key, unpack(opens))
    opens = {}
  end
end
for i = 1, n do
  if reset[i] then
    set_task_state(w, i, 'waiting')
    local pre = 't' .. fmt(i) .. '.'
    for _, f in ipairs(RERUN.FIELDS) do del[#del + 1] = pre .. f end
    if dps[i] then
      opens[#opens + 1] = pre .. F_OPEN
      opens[#opens + 1] = fmt(open[i])
    end
    flush_del(false)
  end
end
flush_del(true)
-- the tasks with no reset dependency, in plan order, with their marks
local mk = {}
for e in string.gmatch(marks, '[^,]+') do
  local is, rest = string.match(e, '^(%d+)(.*)$')
  mk[tonumber(is)] = rest
end
local roots = {}
for i = 1, n do
  if reset[i] and open[i] == 0 then roots[#roots + 1] = fmt(i) .. (mk[i] or '') end
end
local fx = {pushed = {}}
push_roots(w, join(roots, ','), 1, fx)
local dl = tonumber(wget(w, CANCEL.AT) or '0')
if dl > NOW then
  -- its marker, in the delayed set of its first task's queue (a passed
  -- deadline is not armed again)
  local q = CANCEL.marker_queue(w)
  register_queue(q)
  redis.call('ZADD', qkey(q, 'd'), fmt(dl), id .. CANCEL.SUFFIX)
  note_due(q, dl)
  wake(q, 1)
end
finalize()
local out = {fmt(run), fmt(k)}
local names = {}
local x = 0
for name in string.gmatch(wget(w, W_NAMES), '[^\n]+') do
  x = x + 1
  if reset[x] then names[#names + 1] = name end
end
append(out, names)
put_list(out, fx.pushed, 2)
if CALL.stopped then out[#out + 1] = 'P' end
return out
