-- weir3_delete_job: Removes an ended plain job at once, as the expiry of
-- its retention would: its hash, its test-clock expiry entry and its
-- member of its queue's ended list (spec/states.md, DeleteJob).
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  plain job ID (validated in Go; a task's or undo's is refused
--          there)
-- Reply:   {"OK"}
-- Errors:  NOTFOUND; NOTENDED <state> (the 2nd word is the job's state)
--
--!include call.lua
--!include text.lua
--!include job.lua
--!include queue.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
local id = ARGV[4]
local j = load_job(id)
if not j then return redis.error_reply('NOTFOUND job "' .. id .. '"') end
local st = job_state(j)
if not ended_state(st) then
  return redis.error_reply('NOTENDED ' .. st .. ' job "' .. id .. '" is ' .. st)
end
local en = redis.call('HGET', j.key, F_ENDED)
if en then redis.call('ZREM', qkey(job_queue(j), st), pad15(tonumber(en)) .. ':' .. id) end
redis.call('UNLINK', j.key)
redis.call('ZREM', K_EXPIRY, 'j:' .. id)
finalize()
return {'OK'}
