-- weir3_limit_keys: Sets how many jobs of each concurrency key of a queue
-- may be leased at once across every worker (making the queue known when
-- it is not). Keys parked at the old limit that are under the new one
-- rejoin the rotation, in the order they were parked, with wake-up tokens
-- for their ready jobs: the call's work is the number of parked keys.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  queue name
-- ARGV[5]  the limit, 1 to engine.MaxConcurrency, or "0" for none
-- Reply:   "OK" (a one-item array)
--
--!include call.lua
--!include queue.lua
--!include keyed.lua
--!include finalize.lua

begin(KEYS, ARGV)
local q = ARGV[4]
read_clock()
allow_full()
register_queue(q)
qs_set(q, 'kl', ARGV[5] ~= '0' and ARGV[5] or false)
local n = KEYED.keyed_unpark(q, ARGV[5])
if n > 0 then wake(q, n) end
finalize()
return {'OK'}
