-- weir3_finish: Settles finished attempts, in order, then claims when asked
-- (finish + claim is one call). A repeat of a job's last finish (same
-- token) returns the Settled of the first and changes nothing.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  k: number of outcomes
-- ARGV[5 .. 4+9k] per outcome: job ID, token, kind (completed | failed |
--          cancelled | released), "1" when a result is given else "",
--          result, error, "1" when not retryable else "", retry-after ms,
--          and "" or, for a completed outcome that adds tasks, where in
--          ARGV its additions' block starts (dynamic.lua)
-- then:    L, and L strings: the additions' blocks
-- then:    the IDs of workflows that earlier calls of the same finish ended
--          (joined by spaces, or ""): this call still finds them when their
--          retention (0) passed, as one call would
-- then:    claim max ("0": no claim), lease ms, nonce, worker (as claim's), queue names...
-- Reply:   nSettled, Settled* (reply.lua), nClaimed, Claimed* (lease.lua),
--          then "P<i>" when a cascade ran out of the call's budget: with
--          i = 0 among the outcomes (nSettled says how many were settled,
--          and the claim did not run), else in the claim's sweep of its
--          i-th queue (drain, then send the rest)
-- Errors:  PENDING (drain.lua: drain, then send the call again); INVALID,
--          TOOLARGE: an addition refused (dynamic.lua), nothing written
--
--!include call.lua
--!include settle.lua
--!include lease.lua
--!include reply.lua
--!include drain.lua
--!include finalize.lua
--!include dynamic.lua
--!include fast_finish.lua
--!include fast_chain.lua
--!include resent.lua

begin(KEYS, ARGV)
local k = tonumber(ARGV[4])
local c = 5 + 9 * k
c = c + 1 + tonumber(ARGV[c])
if ARGV[c] ~= '' then
  KEEP = {}
  for wid in string.gmatch(ARGV[c], '[^ ]+') do KEEP[wid] = true end
end
read_clock()
allow_full()
if not drain_first() then
  finalize()
  return redis.error_reply(PENDING_REPLY)
end
if c > 6 + 9 * k then
  -- additions: all checked before the first write
  DYN.A = ARGV
  local e = DYN.check_all(k)
  if e then
    finalize()
    return redis.error_reply(e)
  end
end
local max = tonumber(ARGV[c + 1])
-- the mark of the call's last outcome, for its resend (resent.lua)
FF.rs_begin(ARGV, c, k, max)
-- a chain step (fast_chain.lua): one outcome and a claim of one job from
-- one queue, run whole on its own fast path when its case holds
if k == 1 and max == 1 and #ARGV == c + 5 and c == 15 then
  local r = FF.chain(ARGV, c)
  if r then return r end
end
-- the reply, its array part made with room for 256 values (FF.t256) when
-- its Settled (7 values an outcome) and Claimed (some 14 values a job)
-- may need that many: a {} grows by doubling, a rehash and a resize at
-- each power of two
local out
if 7 * k + 14 * max < 200 then out = {'0'} else out = FF.t256() out[1] = '0' end
local done = k
-- settled: this run settled an outcome, so no earlier run of this call
-- happened (it would have settled it) and its claim left no record
local settled = false
-- cd: outcomes from this one on that the fan-in's count-down settled
-- (fast_finish.lua's FF.countdown), their Settled in out; tried in a call
-- of several outcomes whose first is a task's (a batch of plain jobs pays
-- nothing for it)
local cd = 0
local cdt = k > 1 and string.find(ARGV[5], '/', 1, true)
for x = 0, k - 1 do
  local b = 5 + 9 * x
  local id, tok = ARGV[b], ARGV[b + 1]
  local j, tk, ls, a, cr, s
  -- the claim's first queue, to which the last outcome may hand the task
  -- it promotes (fast_task.lua)
  if x == k - 1 and max > 0 then CALL.hq = ARGV[c + 5] end
  if cdt and cd == 0 and x < k - 1 then
    cd = FF.countdown(out, ARGV, x, k, max > 0 and ARGV[c + 5])
    if cd > 0 then settled = true end
  end
  if cd > 0 then
    cd = cd - 1
    s = true
  elseif FF.finish(out, ARGV, b) then
    -- settled on its fast path (fast_finish.lua), its Settled in out
    settled, s = true, true
  else
    FF.flush()
    j, tk, ls, a, cr = leased_job(id, tok)
  end
  if j and j.last_tok then
    -- finished earlier in this call (and perhaps not written: settle)
    if j.last_tok == tok then s = j.last end
  elseif j and ls and FF.rs_first(ls) == tok then
    -- a repeat of the job's last finish: the Settled it returned, or for
    -- a plain job that ended, its end state; its mark, when this call's
    -- first run settled it (resent.lua)
    local sp = string.find(ls, ' ', 1, true)
    if sp then
      s = decode_settled(id, string.sub(ls, sp + 1))
    else
      s = {id = id, state = job_state(j), run_at = 0, wf_state = ''}
    end
    FF.rs_found(ls, j)
  elseif j and tk == tok then
    -- only a running job holds its token (settle clears it)
    j.att, j.cr = tonumber(a) or 0, cr == '1'
    local result = nil
    if ARGV[b + 3] == '1' then result = ARGV[b + 4] end
    if ARGV[b + 8] ~= '' then j.add = tonumber(ARGV[b + 8]) end
    s = settle(j, ARGV[b + 2], result, ARGV[b + 5], ARGV[b + 6] == '1', ARGV[b + 7], tok)
    settled = true
    j.last_tok, j.last = tok, s
  end
  if s ~= true then put_settled(out, s or {id = id, code = 'LEASELOST'}) end
  -- its cascade ran out of the call's budget: the outcomes after it and
  -- the claim wait for another call
  if CALL.stopped then
    done = x + 1
    break
  end
end
FF.flush(true)
out[1] = fmt(done)
if CALL.stopped then
  CALL.stopped_at = 0
  out[#out + 1] = '0'
elseif max > 0 then
  local queues = {}
  for i = c + 5, #ARGV do queues[#queues + 1] = ARGV[i] end
  local at = #out + 1
  out[at] = '0'
  if CALL.rf and not settled then
    -- a resend: its first run's leases, found by its mark (resent.lua);
    -- not a call that settled an outcome itself (an outcome sent twice in
    -- one call finds the mark its first copy wrote)
    out[at] = fmt(FF.rs_reclaim(queues, out))
  else
    out[at] = fmt(claim_once(ARGV[c + 3], queues, max, tonumber(ARGV[c + 2]), out, settled, ARGV[c + 4]))
  end
else
  out[#out + 1] = '0'
end
FF.hand_drop()
finalize()
if CALL.stopped then out[#out + 1] = 'P' .. fmt(CALL.stopped_at) end
return out
