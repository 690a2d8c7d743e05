-- weir2_expire: Sweeps every queue, by name: leases whose deadline is not
-- after now end their attempt as failed ("lease_expired"), then due
-- delayed jobs become ready; at most max of each per queue.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  max per queue
-- ARGV[5]  "<k>/<queue>" or none: go on from that queue (by name), k of
--          its leases ended already (where an earlier call stopped)
-- Reply:   nExpired, Settled* (reply.lua), nDue, (job ID, queue)*, then
--          "P<k>/<queue>" when an expiry's cascade ran out of the call's
--          budget: the sweep stopped after it, in that queue, k of whose
--          leases it ended (drain, then expire from there)
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
if not drain_first() then
  finalize()
  return redis.error_reply(PENDING_REPLY)
end
local max = tonumber(ARGV[4])
local names = redis.call('HKEYS', K_QUEUES)
table.sort(names, bytes_less)
-- where an earlier call stopped: in queue "from", k of its leases ended
local k, from = string.match(ARGV[5] or '', '^(%d+)/(.+)$')
k = tonumber(k) or 0
local res = {expired = {}, due = {}}
for _, q in ipairs(names) do
  if not from or not bytes_less(q, from) then
    res.n = 0
    local left = max
    if q == from then left = max - k end
    sweep(q, max, res, left)
    if CALL.stopped then
      CALL.stopped_at = fmt(res.n + max - left) .. '/' .. q
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
