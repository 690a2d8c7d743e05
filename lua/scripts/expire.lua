-- weir2_expire: Sweeps every queue, by name: leases whose deadline is not
-- after now end their attempt as failed ("lease_expired"), then due
-- delayed jobs become ready; at most max of each per queue.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  max per queue
-- Reply:   nExpired, Settled* (reply.lua), nDue, (job ID, queue)*
--
--!include call.lua
--!include sweep.lua
--!include reply.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
allow_full()
local max = tonumber(ARGV[4])
local names = redis.call('HKEYS', K_QUEUES)
table.sort(names, bytes_less)
local res = {expired = {}, due = {}}
for _, q in ipairs(names) do sweep(q, max, res) end
finalize()
local out = {fmt(#res.expired)}
for _, s in ipairs(res.expired) do put_settled(out, s) end
put_list(out, res.due, 2)
return out
