-- weir3_claim: Leases up to max jobs from the queues, in order, skipping
-- paused and unknown queues; sweeps each queue first (expired leases, due
-- delayed jobs, at most 100 of each). Clears the wake-up list of a queue it
-- empties.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  max jobs
-- ARGV[5]  lease ms
-- ARGV[6]  wait ms, or "": when nothing is claimed and it is positive, also
--          return the next due time, and register the caller as waiting on
--          each known queue until now + wait (its state's w), so that
--          pushes write wake-up tokens meanwhile
-- ARGV[7]  nonce: 16 hex digits, new for each Claim call (claim_once: a
--          call sent again after a broken connection hands out the leases
--          of its first run)
-- ARGV[8]  the claiming worker's ID, or "": each lease's attempt records it
-- ARGV[9 ..] queue names
-- Reply:   now, next due ms or "0", nClaimed, Claimed* (lease.lua), then
--          "P<i>" when a sweep's cascade ran out of the budget in the i-th
--          queue given: the claim stopped there (drain, then claim again
--          from that queue)
-- Errors:  PENDING (drain.lua: drain, then send the call again)
--
--!include call.lua
--!include lease.lua
--!include drain.lua
--!include finalize.lua

begin(KEYS, ARGV)
local queues = {}
for i = 9, #ARGV do queues[#queues + 1] = ARGV[i] end
read_clock()
allow_full()
if not drain_first() then
  finalize()
  return redis.error_reply(PENDING_REPLY)
end
-- the reply: now, next due, the count, then the Claimed (set below)
local out = {NOW_S, '0', '0'}
local n = claim_once(ARGV[7], queues, tonumber(ARGV[4]), tonumber(ARGV[5]), out, false, ARGV[8])
local nd = 0
local wait = tonumber(ARGV[6]) or 0
if n == 0 and wait > 0 and not CALL.stopped then
  nd = next_due(queues)
  local till = NOW + wait
  for _, q in ipairs(queues) do
    local w = qstate(q).w
    if w and tonumber(w) < till then qs_set(q, 'w', till) end
  end
end
finalize()
out[2], out[3] = fmt(nd), fmt(n)
if CALL.stopped then out[#out + 1] = 'P' .. fmt(CALL.stopped_at) end
return out
