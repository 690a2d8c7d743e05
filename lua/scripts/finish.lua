-- weir1_finish: Settles finished attempts, in order, then claims when asked (finish +
-- claim is one call). A repeat of a job's last finish (same token) returns
-- the Settled stored with the job and changes nothing.
--
-- KEYS[1] weir:{<ns>:<p>}:         partition prefix; other keys derive from it
-- KEYS[2] weir:{<ns>:<p>}:seq      hash: now (last now, ms), push and lease counters
-- KEYS[3] weir:{<ns>:<p>}:queues   hash: queue name -> "0" | "1" (paused)
-- KEYS[4] weir:{<ns>:<p>}:wf       zset: every workflow, member <created15>:<id>
-- KEYS[5] weir:{<ns>:<p>}:expiry   zset: ended records by removal time
-- ARGV[1] test clock now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms
-- ARGV[4] k: outcome count
-- ARGV[5 .. 4+8k] per outcome: jobID token kind hasResult("1"|"") result error nonRetryable("1"|"") retryAfterMs
-- then: claim max ("0": no claim), lease ms, queue names...
-- Reply: {nSettled, Settled*, nClaimed, Claimed*}
--   Settled = id code state runAt wfState wfEnded nPushed (id queue)*; code "" or LEASELOST

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

local k = tonumber(ARGV[4])
-- the claim's queues: their waiter fields, due hints and wake-list flags come
-- with the clock (pushes, the claim's sweeps and its wake-list clears read them)
local wfields = {}
for i = 7 + 8 * k, #ARGV do
  wfields[#wfields + 1] = wq(ARGV[i])
  wfields[#wfields + 1] = 'n:' .. ARGV[i]
  wfields[#wfields + 1] = 'k:' .. ARGV[i]
end
read_clock(wfields)
allow_full()
local settled = {}
for x = 0, k - 1 do
  local b = 5 + 8 * x
  local id, tok = ARGV[b], ARGV[b + 1]
  local j = load_job(id)
  local s
  if not j then
    s = {id = id, code = 'LEASELOST'}
  else
    local lt = jget(j, 'lt')
    if lt and lt == tok then
      s = decode_settled(id, jget(j, 'ls'))
    elseif jstate(j) ~= 'running' or jget(j, 'tk') ~= tok then
      s = {id = id, code = 'LEASELOST'}
    else
      local res = nil
      if ARGV[b + 3] == '1' then res = ARGV[b + 4] end
      s = settle(j, ARGV[b + 2], res, ARGV[b + 5], ARGV[b + 6] == '1', tonumber(ARGV[b + 7]))
      jset(j, 'lt', tok)
      jset(j, 'ls', encode_settled(s))
    end
  end
  settled[#settled + 1] = s
end
local c = 5 + 8 * k
local max = tonumber(ARGV[c])
local claimed, n = {}, 0
if max > 0 then
  local queues = {}
  for i = c + 2, #ARGV do queues[#queues + 1] = ARGV[i] end
  n = claim(queues, max, tonumber(ARGV[c + 1]), claimed)
end
finalize()
local out = {fmt(#settled)}
for _, s in ipairs(settled) do put_settled(out, s) end
out[#out + 1] = fmt(n)
append(out, claimed)
return out
