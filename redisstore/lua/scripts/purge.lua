-- weir3_purge: Cancels every job waiting in a queue: the ready ones in claim
-- order (the keyed ones after the unkeyed ones), then the delayed ones in due order, each with the consequences of
-- a cancel (reason "purged"). Jobs pushed by those consequences stay.
-- A call goes through at most its budget of jobs; redisstore.Store sends the
-- rest in more calls.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  queue name
-- ARGV[5 ..] job IDs, or none: the jobs to go through, in this order
--          (those of the queue a first call did not reach), else every
--          job waiting in the queue now
-- Reply:   nPurged, id*, nPushed, (id, queue)*, nDone (how many of the
--          jobs it went through), nLeft, id* (without ARGV[5]: the jobs
--          it did not reach), then "P" when a cascade ran out of the
--          call's budget (drain, then go on with the rest): a job takes
--          one unit of the budget (spec/scripts.md, Cascades in
--          bounded steps)
-- Errors:  PENDING (drain.lua: drain, then send the call again)
--
--!include call.lua
--!include job.lua
--!include queue.lua
--!include ready_read.lua
--!include cascade.lua
--!include settle.lua
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
local q = ARGV[4]
if redis.call('HEXISTS', K_QUEUES, q) == 0 then return {'0', '0', '0', '0'} end
-- the jobs to go through: those given, else every one waiting now
local ids, given = {}, #ARGV >= 5
if given then
  for i = 5, #ARGV do ids[#ids + 1] = ARGV[i] end
else
  -- ready ones in claim order (ready_read.lua), then the keyed, then the
  -- delayed
  ids = READY.all_ids(q)
  append(ids, redis.call('ZRANGE', qkey(q, 'kr'), '0', '-1'))
  append(ids, redis.call('ZRANGE', qkey(q, 'd'), '0', '-1'))
end
local fx = {pushed = {}, cancelled = {}}
local purged = {}
local done = 0
for _, id in ipairs(ids) do
  -- a job takes one unit of the call's budget, its cascade more
  if BUDGET <= 0 then break end
  BUDGET = BUDGET - 1
  done = done + 1
  local j = load_job(id)
  if j and job_state(j) == 'queued' and job_queue(j) == q then
    cancel_task(j, 'purged', fx)
    after_end(j, fx)
    purged[#purged + 1] = id
  end
  if CALL.stopped then break end
end
finalize()
local out = {}
put_list(out, purged, 1)
put_list(out, fx.pushed, 2)
out[#out + 1] = fmt(done)
if given then
  out[#out + 1] = '0'
else
  out[#out + 1] = fmt(#ids - done)
  for i = done + 1, #ids do out[#out + 1] = ids[i] end
end
if CALL.stopped then out[#out + 1] = 'P' end
return out
