-- weir3_progress: Reports a running job's progress and writes its
-- checkpoint, fenced by its lease (spec/states.md, Progress).
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  job ID
-- ARGV[5]  token
-- ARGV[6]  "1" with a progress report, else ""
-- ARGV[7]  percent, as Go formats it (checked in Go: [0, 100])
-- ARGV[8]  message (cut in Go to MaxError bytes)
-- ARGV[9]  "1" with a checkpoint, else ""
-- ARGV[10] checkpoint bytes (checked in Go: MaxCheckpoint); "" removes it
-- Reply:   "OK" (a one-item array)
-- Errors:  LEASELOST (nothing written)
--
--!include call.lua
--!include job.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
local id, tok = ARGV[4], ARGV[5]
local j, tk = leased_job(id, tok)
-- only a running job holds its token (settle clears an ended one's)
if not j or tk ~= tok then
  return redis.error_reply('LEASELOST job "' .. id .. '" is not leased with that token')
end
if ARGV[6] == '1' then
  jset(j, 'pg', ARGV[7] .. ' ' .. NOW_S .. ' ' .. ARGV[8])
end
if ARGV[9] == '1' then
  local ck = ARGV[10]
  if j.kind == 'j' then
    if ck == '' then jdel(j, 'ck') else jset(j, 'ck', ck) end
  elseif ck == '' then
    jdel(j, 'ck')
    redis.call('HDEL', j.wf.pkey, j.pre .. 'ck')
  else
    jset(j, 'ck', '1')
    redis.call('HSET', j.wf.pkey, j.pre .. 'ck', ck)
  end
end
finalize()
return {'OK'}
