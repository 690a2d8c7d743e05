-- attempts.lua: a job's attempt history (spec/states.md, Attempt
-- history; spec/keys.md, fields w and ah). A claim writes the attempt's
-- start and worker, w "<start ms> <worker>"; an attempt that ends without
-- its job ending by a finish (a failure retried, a lease expiry, a
-- release) moves into ah, the last 10 (weir.MaxAttemptHistory) such
-- attempts, each "<attempt> <start> <end> <outcome> <#worker> <#error>
-- <worker><error>", and w becomes "". An attempt that ends its job by a
-- finish (the common case) writes nothing more: Go composes it from w and
-- the job's end.
--
--!include call.lua
--!include job.lua

-- FF.archive appends to hs (the fields of the HSET its caller makes) what
-- moves running job j's current attempt (j.att) into its history, ended
-- now with outcome o ('failed', 'expired' or 'released') and reason e;
-- returns the attempt's w as it was (nil when none).
-- (A field of FF, not a local: the library's top level has few registers
-- left.)
function FF.archive(j, hs, o, e)
  local w, h = jget(j, 'w', 'ah')
  if not w or w == '' then return w end
  local st, wk = string.match(w, '^(%d+) (.*)$')
  h = h or ''
  -- the entries' starts, to keep the last 9 before the new one
  local starts, pos = {}, 1
  while pos <= #h do
    starts[#starts + 1] = pos
    local wl, el, q = string.match(h, '^%d+ %d+ %d+ %a+ (%d+) (%d+) ()', pos)
    pos = q + tonumber(wl) + tonumber(el)
  end
  if #starts >= 10 then h = string.sub(h, starts[#starts - 8]) end
  local n = #hs
  hs[n + 1] = j.pre .. 'ah'
  hs[n + 2] = h .. fmt(j.att) .. ' ' .. st .. ' ' .. NOW_S .. ' ' .. o .. ' ' .. fmt(#wk) .. ' ' .. fmt(#e) .. ' ' .. wk .. e
  hs[n + 3] = j.pre .. 'w'
  hs[n + 4] = ''
  return w
end
