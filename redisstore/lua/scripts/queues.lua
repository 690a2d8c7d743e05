-- weir3_queues: Lists every queue the store knows, by name, with its
-- counts. Read-only.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- Reply:   n, (name, paused "1" | "", ready, delayed, running, concurrency,
--          key concurrency)*
--
--!include call.lua
--!include reply.lua

begin(KEYS, ARGV)
local out = {}
queues_reply(out)
return out
