-- signal_open.lua: opening a signal task (spec/states.md, Signal) where
-- another task is pushed: a root at submit, a promotion in a cascade.
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--
-- Go marks a signal task where a push finds it, so that a promotion reads
-- nothing more: its entry in a dependents list (t<i>.dn) carries
-- "<priority>s<timeout ms>" for its priority, and its root index in a
-- submit's (or a drain's) list is "<index>s<timeout ms>". Its spec's flags
-- carry "S". An open task is the state byte "o"; with a timeout it waits in
-- its queue's delayed set until it opened plus the timeout (F_RUN_AT),
-- where a sweep fails it (signal_end.lua).
--
-- SIG holds the functions of signal tasks: one local for all of them (the
-- library's top level has few registers left).
local SIG = {}

-- SIG.open opens task j, a signal task, with a timeout of ms (0: none).
function SIG.open(j, ms, fx)
  set_job_state(j, 'open')
  if ms <= 0 then return end
  local q = job_queue(j)
  register_queue(q)
  local ra = NOW + ms
  jset(j, F_RUN_AT, fmt(ra))
  redis.call('ZADD', qkey(q, 'd'), fmt(ra), job_id(j))
  note_due(q, ra)
  -- a claim blocked on q wakes to wait only until the timeout
  wake(q, 1)
end

-- SIG.push pushes task j ready, or opens it when pr (its priority as its
-- dependents entry gives it) marks a signal task.
function SIG.push(j, pr, fx)
  local s = string.find(pr, 's', 1, true)
  if s then
    SIG.open(j, tonumber(string.sub(pr, s + 1)), fx)
  else
    push(j, 0, fx)
  end
end

-- SIG.root pushes (or opens) root r of workflow w, as a submit lists it:
-- "<index>" or "<index>s<timeout ms>".
function SIG.root(w, r, fx)
  local is, ms = string.match(r, '^(%d+)s(%d+)$')
  if is then
    SIG.open(task_job(w, tonumber(is), is), tonumber(ms), fx)
  else
    push(task_job(w, tonumber(r), r), 0, fx)
  end
end
