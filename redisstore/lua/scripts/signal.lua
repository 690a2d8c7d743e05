-- weir3_signal: Completes or fails an open signal task (spec/states.md,
-- Signal), with the consequences of a finished task. The signal that ended
-- the task, sent again, changes nothing.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  workflow ID
-- ARGV[5]  task name
-- ARGV[6]  kind: completed | failed
-- ARGV[7]  "1" when a completion has a value
-- ARGV[8]  the value (completed) or the reason, cut to MaxError (failed)
-- Reply:   signalled "1" | "", state, wfState, wfEnded "1" | "",
--          nPushed, (job ID, queue)*, then "P" when its cascade ran out of
--          the call's budget (drain the rest)
-- Errors:  NOTFOUND (workflow or task); INVALID (not a signal task: Go
--          makes it a ValidationError of field task); NOTOPEN <state>;
--          SIGNALLED <state>; PENDING
--          (drain.lua: drain, then send the call again)
--
--!include call.lua
--!include workflow.lua
--!include job.lua
--!include signal_end.lua
--!include reply.lua
--!include drain.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
allow_full()
if not drain_first() then
  finalize()
  return redis.error_reply(PENDING_REPLY)
end
local wid, name, kind, has, val = ARGV[4], ARGV[5], ARGV[6], ARGV[7] == '1', ARGV[8]
local w = load_wf(wid)
if not w then return redis.error_reply('NOTFOUND workflow "' .. wid .. '"') end
local is = redis.call('HGET', wf_ikey(w), name)
if not is then return redis.error_reply('NOTFOUND task "' .. name .. '" of workflow "' .. wid .. '"') end
local i = tonumber(is)
local j = task_job(w, i, is)
j.id = wid .. '/' .. name
bag('jobs')[j.id] = j
local flags = string.match(task_spec(w, i, is), '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|([^|]*)')
if not string.find(flags or '', 'S', 1, true) then
  return redis.error_reply('INVALID task "' .. name .. '" is not a signal task')
end
local st = job_state(j)
if ended_state(st) then
  local sg, r, e = jget(j, F_SIGNAL, F_RESULT, F_ERROR)
  if sg == kind and ((kind == 'completed' and (r or '') == val) or (kind == 'failed' and (e or '') == val)) then
    return {'', st, wget(w, W_STATE), '', '0'}
  end
  return redis.error_reply('SIGNALLED ' .. st .. ' task "' .. name .. '" of workflow "' .. wid .. '" is ' .. st)
end
if st ~= 'open' then
  return redis.error_reply('NOTOPEN ' .. st .. ' task "' .. name .. '" of workflow "' .. wid .. '" is ' .. st)
end
local result = nil
if kind == 'completed' and has then result = val end
local s = SIG.finish(j, kind, result, val, true)
finalize()
local out = {'1', s.state, s.wf_state, s.wf_ended and '1' or ''}
put_list(out, s.pushed, 2)
if CALL.stopped then out[#out + 1] = 'P' end
return out
