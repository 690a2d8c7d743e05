-- weir3_retry_job: Runs a plain job that ended failed or cancelled again:
-- queued (ready, or delayed until its run-at) with its attempts, lease
-- expiries, error, result, end and last finish cleared; it leaves its
-- ended list and loses its removal time (spec/states.md, RetryJob).
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  job ID (validated in Go)
-- ARGV[5]  run-at ms (0: now)
-- Reply:   state, runAt ms (0: ready now), nPushed, (id, queue)*
-- Errors:  NOTFOUND; NOTRETRYABLE <state> (the 2nd word is the job's
--          state): a task or undo job, or a job not ended failed or
--          cancelled
--
--!include call.lua
--!include text.lua
--!include job.lua
--!include queue.lua
--!include reply.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
deny_full()
local id = ARGV[4]
local j = load_job(id)
if not j then return redis.error_reply('NOTFOUND job "' .. id .. '"') end
local st = job_state(j)
if j.kind ~= 'j' then
  return redis.error_reply('NOTRETRYABLE ' .. st .. ' job "' .. id .. '" is a job of workflow "' .. j.wf.id .. '"')
end
if st ~= 'failed' and st ~= 'cancelled' then
  return redis.error_reply('NOTRETRYABLE ' .. st .. ' job "' .. id .. '" is ' .. st)
end
local en = redis.call('HGET', j.key, F_ENDED)
if en then redis.call('ZREM', qkey(job_queue(j), st), pad15(tonumber(en)) .. ':' .. id) end
redis.call('HDEL', j.key, F_ATTEMPT, F_EXPIRIES, F_ERROR, F_RESULT, F_ENDED, F_CANCEL, F_TOKEN, F_DEADLINE,
  F_LAST_SETTLED, F_RUN_AT, 'w', 'ah')
-- its removal time: a PEXPIREAT with the server clock, an expiry entry
-- with the test clock
redis.call('PERSIST', j.key)
redis.call('ZREM', K_EXPIRY, 'j:' .. id)
local ra = tonumber(ARGV[5])
local hs = {F_STATE, 'queued'}
if ra > NOW then
  hs[3] = F_RUN_AT
  hs[4] = ARGV[5]
else
  ra = 0
end
local fx = {}
push(j, ra, fx, true)
READY.add_ready(hs, j)
redis.call('HSET', j.key, unpack(hs))
finalize()
local out = {'queued', fmt(ra)}
put_list(out, fx.pushed, 2)
return out
