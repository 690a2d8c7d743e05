-- signal_end.lua: how a signal task ends (spec/states.md, Signal): by a
-- signal (scripts/signal.lua) or by its timeout, which a sweep finds due
-- in its queue's delayed set (sweep.lua).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include promote.lua
--!include settle.lua

-- SIG.finish ends open signal task j as kind ("completed" or "failed")
-- with result (completed; nil for none) or err (failed), with the
-- consequences of a finished task; sig, when given, records that a signal
-- of that kind ended it (F_SIGNAL), so that the same signal again is
-- known. Returns its Settled {id, state, run_at, pushed, wf_state,
-- wf_ended}.
function SIG.finish(j, kind, result, err, sig)
  local fx = {}
  unqueue(j)
  jdel(j, F_RUN_AT)
  local hs = {F_ENDED, NOW_S}
  if kind == 'completed' then
    if result then
      hs[3], hs[4] = F_RESULT, result
    end
  else
    hs[3], hs[4] = F_ERROR, err
  end
  if sig then
    hs[#hs + 1] = F_SIGNAL
    hs[#hs + 1] = kind
  end
  jset(j, unpack(hs))
  set_job_state(j, kind)
  EV.add(kind, job_id(j), 0, kind == 'failed' and err or '')
  if kind == 'completed' then
    -- what a claim in this call hands the task's dependents
    local d = j.wf.done
    if not d then
      d = {}
      j.wf.done = d
    end
    d[j.i] = result or false
  end
  after_end(j, fx)
  return {id = job_id(j), state = kind, run_at = 0, pushed = fx.pushed, wf_state = wget(j.wf, W_STATE),
    wf_ended = fx.wf_ended}
end

-- SIG.timeout fails open signal task j, found due by a sweep, with reason
-- "timeout", and adds its Settled to res.expired when res is given. (A
-- sweep whose call ran out of its budget calls it no more: sweep.lua puts
-- the rest back.)
function SIG.timeout(j, res)
  local s = SIG.finish(j, 'failed', nil, 'timeout')
  if res then res.expired[#res.expired + 1] = s end
end
