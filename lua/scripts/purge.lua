-- weir2_purge: Cancels every job waiting in a queue: the ready ones in claim
-- order, then the delayed ones in due order, each with the consequences of
-- a cancel (reason "purged"). Jobs pushed by those consequences stay.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  queue name
-- Reply:   nPurged, id*, nPushed, (id, queue)*
--
--!include call.lua
--!include job.lua
--!include queue.lua
--!include cascade.lua
--!include settle.lua
--!include reply.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
allow_full()
local q = ARGV[4]
if redis.call('HEXISTS', K_QUEUES, q) == 0 then return {'0', '0'} end
local ids = redis.call('ZRANGE', qkey(q, 'r'), '0', '-1')
append(ids, redis.call('ZRANGE', qkey(q, 'd'), '0', '-1'))
local fx = {pushed = {}, cancelled = {}}
local purged = {}
for _, id in ipairs(ids) do
  local j = load_job(id)
  if j and job_state(j) == 'queued' then
    cancel_task(j, 'purged', fx)
    after_end(j, fx)
    purged[#purged + 1] = id
  end
end
finalize()
local out = {}
put_list(out, purged, 1)
put_list(out, fx.pushed, 2)
return out
