-- weir3_queues: Lists every queue the store knows, by name, with its
-- counts. Read-only. It reads the clock as every call does (read_clock),
-- and with it the partition's protocol marker where the seq hash has no
-- now: a partition that protocol 2 wrote, or that weir migrate converts,
-- fails there (WRONGTYPE: ErrNeedsMigration) before anything is listed.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- Reply:   n, (name, paused "1" | "", ready, delayed, running, concurrency,
--          key concurrency)*
--
--!include call.lua
--!include reply.lua

begin(KEYS, ARGV)
read_clock()
local out = {}
queues_reply(out)
return out
