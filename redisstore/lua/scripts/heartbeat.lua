-- weir3_heartbeat: Extends many leases to now + extend and says, per lease,
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
read_clock()
allow_full()
local ext = tonumber(ARGV[4])
local out = {}
for b = 5, #ARGV, 2 do
  local id = ARGV[b]
  local j, tk, _, _, cr, dl = leased_job(id, ARGV[b + 1])
  local n = #out
  -- only a running job holds its token (settle clears an expired one's)
  if not j or tk ~= ARGV[b + 1] then
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
    active_add_later(q, nds, id)
    out[n + 1] = ''
    out[n + 2] = cr or ''
    out[n + 3] = nds
  end
end
finalize()
return out
