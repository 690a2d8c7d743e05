-- weir1_list: Pages through workflows, newest first (created, then ID, both
-- descending), optionally of one state; skips records whose retention passed.
--
-- KEYS[1] weir:{<ns>:<p>}:         partition prefix; other keys derive from it
-- KEYS[2] weir:{<ns>:<p>}:seq      hash: now (last now, ms), push and lease counters
-- KEYS[3] weir:{<ns>:<p>}:queues   hash: queue name -> "0" | "1" (paused)
-- KEYS[4] weir:{<ns>:<p>}:wf       zset: every workflow, member <created15>:<id>
-- KEYS[5] weir:{<ns>:<p>}:expiry   zset: ended records by removal time
-- ARGV[1] test clock now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms
-- ARGV[4] state, or "" for all
-- ARGV[5] page size
-- ARGV[6] cursor member <created15>:<id> of the previous page's last, or ""
-- Reply: {next cursor member or "", n, (fieldCount, field/value list of the workflow hash)*}

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock()
save_clock()
local st, limit, cursor = ARGV[4], tonumber(ARGV[5]), ARGV[6]
local idx = K_WF
if st ~= '' then idx = P .. 'wf:' .. st end
local max = '+'
if cursor ~= '' then max = '(' .. cursor end
local found = {}
local batch = limit + 1
while #found <= limit do
  local ms = redis.call('ZREVRANGEBYLEX', idx, max, '-', 'LIMIT', 0, batch)
  for _, m in ipairs(ms) do
    local c = string.sub(m, 1, 15)
    local id = string.sub(m, 17)
    local w = load_wf(id)
    if w and pad15(num(hget(w.key, 'c'))) == c and (st == '' or hget(w.key, 'st') == st) then
      found[#found + 1] = {m, w}
      if #found > limit then break end
    end
  end
  if #ms < batch then break end
  max = '(' .. ms[#ms]
end
local out = {'', '0'}
local n = 0
for x, f in ipairs(found) do
  if x > limit then
    out[1] = found[limit][1]
    break
  end
  local h = redis.call('HGETALL', f[2].key)
  h[#h + 1] = 'S'
  h[#h + 1] = wS(f[2])
  out[#out + 1] = fmt(#h)
  append(out, h)
  n = n + 1
end
out[2] = fmt(n)
return out
