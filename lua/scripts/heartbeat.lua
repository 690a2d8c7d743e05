-- weir2_heartbeat: Extends many leases to now + extend and says, per lease,
-- whether it is lost and whether its job should stop.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  extend ms
-- ARGV[5 ..] job ID, token, ...
-- Reply:   per lease: lost "1" | "", cancel "1" | "", deadline ms
--
--!include call.lua
--!include job.lua
--!include queue.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock({'gc'})
allow_full()
local ext = tonumber(ARGV[4])
local out = {}
for b = 5, #ARGV, 2 do
  local id = ARGV[b]
  local j = load_job(id)
  local tk, dl, cr
  if j then tk, dl, cr = jget(j, F_TOKEN, F_DEADLINE, F_CANCEL) end
  local n = #out
  if not j or tk ~= ARGV[b + 1] or job_state(j) ~= 'running' then
    out[n + 1] = '1'
    out[n + 2] = ''
    out[n + 3] = '0'
  else
    local q = job_queue(j)
    local nd = NOW + ext
    -- a shorter lease than before lowers the queue's due hint
    if nd < (tonumber(dl) or 0) then note_due(q, nd) end
    local nds = fmt(nd)
    jset(j, F_DEADLINE, nds)
    active_add_later(q, nd, id)
    out[n + 1] = ''
    out[n + 2] = cr or ''
    out[n + 3] = nds
  end
end
finalize()
return out
