-- weir3_enqueue: Writes plain jobs and pushes each, or delays it until its
-- run-at; each job as Enqueue would (a batch is several in one call).
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  k: number of jobs, then per job 10 values:
--          job ID (no '/'), queue, priority, spec "queue|priority|
--          maxAttempts|backoffMs|timeoutMs" (defaults applied), "1" when a
--          payload is given (even empty) else "", payload, run-at ms (0:
--          now; -<ms>: that long after this call's now), spec
--          fingerprint (run-at and delay excluded), unique ("" or
--          "<digest>:<ms>": the job's unique key, held for ms or, for 0,
--          until the job ends; the spec then ends "|U<digest>" or
--          "|u<digest>"), traceparent ("": none; trace.lua)
-- Reply:   per job: created, state; created is "1" (written), "" (the
--          same spec existed: no effect), "JOBEXISTS" (another spec
--          exists under the ID: no effect, state "") or "UNIQUE" (another
--          job holds the unique key: no effect; state is that job's, and
--          its ID follows as a third value)
--
--!include call.lua
--!include job.lua
--!include queue.lua
--!include plain.lua
--!include unique.lua
--!include finalize.lua
--!include fast_enqueue.lua

begin(KEYS, ARGV)
local k = tonumber(ARGV[4])
read_clock()
-- a batch of new ready plain jobs in one queue (fast_enqueue.lua)
local fast = FF.enqueue(ARGV, k)
if fast then return fast end
local out = {}
local fx = {}
for x = 0, k - 1 do
  local b = 5 + 10 * x
  local id, hash = ARGV[b], ARGV[b + 7]
  local key = P .. 'j:' .. id
  local v = redis.call('HMGET', key, F_STATE, F_ENDED, F_HASH)
  local uq, lk, holder, hst = ARGV[b + 8], false, nil, nil
  if uq ~= '' and not (v[1] and not plain_expired(v[2])) then
    lk = unique_key(string.match(uq, '^[^:]*'))
    holder, hst = unique_holder(lk)
  end
  if holder then
    out[#out + 1] = 'UNIQUE'
    out[#out + 1] = hst
    out[#out + 1] = holder
  elseif v[1] and not plain_expired(v[2]) then
    if v[3] == hash then
      out[#out + 1] = ''
      out[#out + 1] = v[1]
    else
      out[#out + 1] = 'JOBEXISTS'
      out[#out + 1] = ''
    end
  else
    if v[1] then
      -- the old record's retention passed: it goes first
      redis.call('ZREM', K_EXPIRY, 'j:' .. id)
      redis.call('UNLINK', key)
    end
    local ra = tonumber(ARGV[b + 6])
    if ra < 0 then ra = NOW - ra end -- a delay from now
    write_plain(ARGV, id, key, b, ra, fx)
    if lk then unique_take(lk, id, tonumber(string.match(uq, ':(%d+)$'))) end
    out[#out + 1] = '1'
    out[#out + 1] = 'queued'
  end
end
finalize()
return out
