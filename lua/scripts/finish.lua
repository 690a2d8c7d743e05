-- weir2_finish: Settles finished attempts, in order, then claims when asked
-- (finish + claim is one call). A repeat of a job's last finish (same
-- token) returns the Settled of the first and changes nothing.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  k: number of outcomes
-- ARGV[5 .. 4+8k] per outcome: job ID, token, kind (completed | failed |
--          cancelled | released), "1" when a result is given else "",
--          result, error, "1" when not retryable else "", retry-after ms
-- then:    claim max ("0": no claim), lease ms, queue names...
-- Reply:   nSettled, Settled* (reply.lua), nClaimed, Claimed* (lease.lua)
--
--!include call.lua
--!include settle.lua
--!include lease.lua
--!include reply.lua
--!include finalize.lua

begin(KEYS, ARGV)
local k = tonumber(ARGV[4])
local c = 5 + 8 * k
local fields = {'lease', 'push', 'gc'}
for i = c + 2, #ARGV do
  local q = ARGV[i]
  fields[#fields + 1] = 'w:' .. q
  fields[#fields + 1] = 'p:' .. q
  fields[#fields + 1] = 'n:' .. q
  fields[#fields + 1] = 'k:' .. q
end
read_clock(fields)
allow_full()
local out = {fmt(k)}
for x = 0, k - 1 do
  local b = 5 + 8 * x
  local id, tok = ARGV[b], ARGV[b + 1]
  local j = load_job(id)
  local s
  if j and j.last_tok == tok then
    -- the same outcome twice in this call: the first one's Settled
    s = j.last
  elseif j then
    local tk, lt, a, cr = jget(j, F_TOKEN, F_LAST_TOKEN, F_ATTEMPT, F_CANCEL)
    -- settled earlier in this call, perhaps not written (write_settled)
    if j.last_tok then lt = j.last_tok end
    if lt == tok then
      local ls = jget(j, F_LAST_SETTLED)
      if ls and ls ~= '' then
        s = decode_settled(id, ls)
      else
        -- a plain job that ended keeps no Settled: it is its end state
        s = {id = id, state = job_state(j), run_at = 0, wf_state = '', pushed = {}}
      end
    elseif tk == tok and job_state(j) == 'running' then
      j.att, j.cr = tonumber(a) or 0, cr == '1'
      local result = nil
      if ARGV[b + 3] == '1' then result = ARGV[b + 4] end
      local hs
      s, hs = settle(j, ARGV[b + 2], result, ARGV[b + 5], ARGV[b + 6] == '1', tonumber(ARGV[b + 7]))
      hs[#hs + 1] = F_LAST_TOKEN
      hs[#hs + 1] = tok
      -- a plain job that ended keeps an empty Settled: its end state says it
      hs[#hs + 1] = F_LAST_SETTLED
      if j.kind == 'j' and ended_state(s.state) then
        hs[#hs + 1] = ''
      else
        hs[#hs + 1] = encode_settled(s)
      end
      write_settled(j, hs)
      j.last_tok, j.last = tok, s
    end
  end
  put_settled(out, s or {id = id, code = 'LEASELOST'})
end
local max = tonumber(ARGV[c])
if max > 0 then
  local queues = {}
  for i = c + 2, #ARGV do queues[#queues + 1] = ARGV[i] end
  local claimed = {}
  local n = claim(queues, max, tonumber(ARGV[c + 1]), claimed)
  out[#out + 1] = fmt(n)
  append(out, claimed)
else
  out[#out + 1] = '0'
end
finalize()
return out
