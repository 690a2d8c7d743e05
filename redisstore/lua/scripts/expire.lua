-- weir3_expire: Sweeps every queue, by name: leases whose deadline is not
-- after now end their attempt as failed ("lease_expired"), then due
-- delayed jobs become ready; at most max of each per queue.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  max per queue
-- ARGV[5]  "<k>/<d>/<queue>" or none: go on from that queue (by name), k
--          of its leases ended and d of its delayed jobs handled already
--          (where an earlier call stopped)
-- Reply:   nExpired, Settled* (reply.lua), nDue, (job ID, queue)*, then
--          "P<k>/<d>/<queue>" when an expiry's or a timeout's cascade ran
--          out of the call's budget: the sweep stopped after it, in that
--          queue, k of whose leases it ended and d of whose delayed jobs it
--          handled (drain, then expire from there)
-- Errors:  PENDING (drain.lua: drain, then send the call again)
--
--!include call.lua
--!include sweep.lua
--!include reply.lua
--!include drain.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
allow_full()
CALL.gc_max = XB.EXPIRE
if not drain_first() then
  finalize()
  return redis.error_reply(PENDING_REPLY)
end
local max = tonumber(ARGV[4])
local names = redis.call('HKEYS', K_QUEUES)
table.sort(names, bytes_less)
-- where an earlier call stopped: in queue "from", k of its leases ended and
-- d of its delayed jobs handled
local k, d, from = string.match(ARGV[5] or '', '^(%d+)/(%d+)/(.+)$')
k, d = tonumber(k) or 0, tonumber(d) or 0
local res = {expired = {}, due = {}}
for _, q in ipairs(names) do
  if not from or not bytes_less(q, from) then
    res.n, res.d = 0, 0
    local left, left_due = max, max
    if q == from then left, left_due = max - k, max - d end
    sweep(q, max, res, left, left_due)
    if CALL.stopped then
      CALL.stopped_at = fmt(res.n + max - left) .. '/' .. fmt(res.d + max - left_due) .. '/' .. q
      break
    end
  end
end
finalize()
local out = {fmt(#res.expired)}
for _, s in ipairs(res.expired) do put_settled(out, s) end
put_list(out, res.due, 2)
if CALL.stopped then out[#out + 1] = 'P' .. CALL.stopped_at end
return out
