-- weir3_get_job: Reads one job's snapshot. Read-only.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  job ID
-- ARGV[5]  "1": return it even when its retention passed (awaits)
-- Reply:   job snapshot (16 strings, reply.lua)
-- Errors:  NOTFOUND
--
--!include call.lua
--!include job.lua
--!include reply.lua

begin(KEYS, ARGV)
read_clock()
IGNORE_EXPIRY = ARGV[5] == '1'
local j = load_job(ARGV[4])
if not j then return redis.error_reply('NOTFOUND job "' .. ARGV[4] .. '"') end
local out = {}
put_snapshot(out, j)
return out
