-- promote.lua: promotion, making a task runnable where it becomes so: a
-- root at submit or re-run, a task whose dependencies all ended in a
-- cascade, a task a finish adds (dynamic.lua). It is pushed ready, or
-- delayed by its delay or its workflow's later start (spec/states.md,
-- Delayed tasks), or, a signal task, opened (spec/states.md, Signal).
-- The model's counterpart is engine/model_promote.go.
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
-- SIG holds the functions of this file and of signal_end.lua (how a
-- signal task ends): one local for all of them (the library's top level
-- has few registers left).
local SIG = {}

-- SIG.open opens task j, a signal task, with a timeout of ms (0: none).
function SIG.open(j, ms, fx)
  set_job_state(j, 'open')
  EV.add('opened', job_id(j), 0, '')
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

-- SIG.delayed pushes task j delayed until ra (when after now; else ready).
function SIG.delayed(j, ra, fx)
  if ra > NOW then jset(j, F_RUN_AT, fmt(ra)) end
  push(j, ra, fx)
end

-- SIG.push pushes task j ready, or opens it when pr (its priority as its
-- dependents entry gives it) marks a signal task, or delays it when pr
-- ends with "d<delay ms>" (a delayed task: its dependencies ended now).
-- rd: the ready-at of a task pushed ready (ready.lua promotion_ready).
function SIG.push(j, pr, fx, rd)
  -- the marks stand before a concurrency key (":<key>"), which may hold
  -- any letter
  pr = string.match(pr, '^[^:]*')
  local s = string.find(pr, '[sd]')
  if not s then
    push(j, 0, fx, nil, rd)
  elseif string.byte(pr, s) == 115 then
    SIG.open(j, tonumber(string.sub(pr, s + 1)), fx)
  else
    j.pr = tonumber(string.sub(pr, 1, s - 1))
    SIG.delayed(j, NOW + tonumber(string.sub(pr, s + 1)), fx)
  end
end

-- SIG.root pushes (or opens) root r of workflow w, as a submit lists it:
-- "<index>", "<index>s<timeout ms>" (a signal task), or
-- "<index>[a<start ms>][d<delay ms>]": delayed until the later of now and
-- the workflow's start, plus its delay.
function SIG.root(w, r, fx)
  local is, rest = string.match(r, '^(%d+)(.*)$')
  local j = task_job(w, tonumber(is), is)
  if rest == '' then
    push(j, 0, fx)
    return
  end
  local ms = string.match(rest, '^s(%d+)$')
  if ms then
    SIG.open(j, tonumber(ms), fx)
    return
  end
  local at, d = string.match(rest, 'a(%d+)'), string.match(rest, 'd(%d+)')
  SIG.delayed(j, math.max(NOW, tonumber(at or '0')) + tonumber(d or '0'), fx)
end
