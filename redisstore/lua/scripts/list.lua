-- weir3_list: Pages through workflows, newest first (created, then ID, both
-- descending), optionally of one state; skips records whose retention
-- passed. With an ID prefix, the workflows whose ID starts with it in ID
-- order (bytes, ascending), read from P wf:id with ZRANGEBYLEX from the
-- prefix (or after the cursor) to its last possible ID, so that only
-- matching entries are read. Read-only.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  state, or "" for all
-- ARGV[5]  page size
-- ARGV[6]  cursor member <created15>:<id> of the previous page's last, or
--          "" (with ARGV[10]: the previous page's last ID, "" or not before
--          the prefix, as Go makes it)
-- ARGV[7]  name prefix, or "" for any name
-- ARGV[8]  labels every listed workflow carries, "<key>=<value>" joined by
--          "\n" (as the lb field), or ""
-- ARGV[9]  with ARGV[7], ARGV[8] or ARGV[10] set, the most workflows
--          examined (weir.ListScan): the next cursor is then the last one
--          examined when one follows it (spec/states.md, Listing workflows)
-- ARGV[10] ID prefix, or "": with one, every workflow of P wf:id from the
--          cursor that starts with it is examined (its State, Name and
--          Labels tested); the next cursor is an ID
-- Reply:   next cursor member (an ID with ARGV[10]) or "", n, (count, field/value list of the
--          workflow hash, "S", task states | "L", workflow ID)*: "L" past
--          2,000 tasks in the call, or for a workflow of more than 500
--          (Go reads those with get_workflow)
--
--!include call.lua
--!include text.lua
--!include workflow.lua

begin(KEYS, ARGV)
read_clock()
local st, limit, cursor = ARGV[4], tonumber(ARGV[5]), ARGV[6]
local idx = K_WF
if st ~= '' then idx = P .. 'wf:' .. st end
local max = '+'
if cursor ~= '' then max = '(' .. cursor end
local found = {}
local batch = limit + 1
while #found <= limit and ARGV[7] == '' and ARGV[8] == '' and ARGV[10] == '' do
  local ms = redis.call('ZREVRANGEBYLEX', idx, max, '-', 'LIMIT', '0', fmt(batch))
  for _, m in ipairs(ms) do
    local c = string.sub(m, 1, 15)
    local w = load_wf(string.sub(m, 17))
    if w and pad15(tonumber(wget(w, F_CREATED)) or 0) == c and (st == '' or wget(w, W_STATE) == st) then
      found[#found + 1] = {m, w}
      if #found > limit then break end
    end
  end
  if #ms < batch then break end
  max = '(' .. ms[#ms]
end
if ARGV[10] == '' and (ARGV[7] ~= '' or ARGV[8] ~= '') then
  -- filtered: examine at most ARGV[9] live workflows (found.next: the last
  -- one examined, when one follows it)
  local prefix, scan, want, seen, last, done = ARGV[7], tonumber(ARGV[9]), {}, 0, nil, false
  local fb = math.max(batch, 100) -- index entries a read
  for kv in string.gmatch(ARGV[8], '[^\n]+') do want[#want + 1] = '\n' .. kv .. '\n' end
  while not done do
    local ms = redis.call('ZREVRANGEBYLEX', idx, max, '-', 'LIMIT', '0', fmt(fb))
    for _, m in ipairs(ms) do
      local w = load_wf(string.sub(m, 17))
      if w and pad15(tonumber(wget(w, F_CREATED)) or 0) == string.sub(m, 1, 15) and (st == '' or wget(w, W_STATE) == st) then
        if seen == scan or #found == limit then
          found.next, done = last, true
          break
        end
        seen, last = seen + 1, m
        local v = redis.call('HMGET', w.key, 'nm', 'lb')
        local ok = string.sub(v[1] or '', 1, #prefix) == prefix
        local lb = '\n' .. (v[2] or '') .. '\n'
        for _, p in ipairs(want) do
          ok = ok and string.find(lb, p, 1, true) ~= nil
        end
        if ok then found[#found + 1] = {m, w} end
      end
    end
    if #ms < fb then break end
    max = '(' .. ms[#ms]
  end
end
if ARGV[10] ~= '' then
  -- by ID prefix: the index of IDs holds every workflow once its
  -- partition's seq hash says ix (a partition written before it existed
  -- gets it from weir migrate, migrate.lua)
  if not SEQ.fresh and seq_get('ix') ~= '1' then
    return redis.error_reply('NOINDEX the ID index of partition ' .. P .. ' is not built yet: run weir migrate')
  end
  local prefix, scan, want, seen, last, done = ARGV[7], tonumber(ARGV[9]), {}, 0, nil, false
  local fb = math.max(batch, 100) -- index entries a read
  local lo, hi = '[' .. ARGV[10], '[' .. ARGV[10] .. string.char(255)
  if cursor ~= '' then lo = '(' .. cursor end
  for kv in string.gmatch(ARGV[8], '[^\n]+') do want[#want + 1] = '\n' .. kv .. '\n' end
  while not done do
    local ids = redis.call('ZRANGEBYLEX', P .. 'wf:id', lo, hi, 'LIMIT', '0', fmt(fb))
    for _, id in ipairs(ids) do
      local w = load_wf(id)
      if w then
        if seen == scan or #found == limit then
          found.next, done = last, true
          break
        end
        seen, last = seen + 1, id
        local ok = st == '' or wget(w, W_STATE) == st
        if ok and (prefix ~= '' or #want > 0) then
          local v = redis.call('HMGET', w.key, 'nm', 'lb')
          ok = string.sub(v[1] or '', 1, #prefix) == prefix
          local lb = '\n' .. (v[2] or '') .. '\n'
          for _, p in ipairs(want) do
            ok = ok and string.find(lb, p, 1, true) ~= nil
          end
        end
        if ok then found[#found + 1] = {id, w} end
      end
    end
    if #ids < fb then break end
    lo = '(' .. ids[#ids]
  end
end
local out = {'', '0'}
local n = 0
-- the tasks of the records read here: past LIST_INLINE_TASKS (or for a
-- workflow of more than 500 tasks) only "L" and the ID, which Go reads
-- with get_workflow, so that one call stays short however large the page
local inline = 0
for x, f in ipairs(found) do
  if x > limit then
    out[1] = found[limit][1]
    break
  end
  local tasks = tonumber(wget(f[2], W_TASKS)) or 0
  if tasks > 500 or inline + tasks > 2000 then -- READ_INLINE_TASKS, LIST_INLINE_TASKS
    out[#out + 1] = 'L'
    out[#out + 1] = f[2].id
  else
    inline = inline + tasks
    local h = redis.call('HGETALL', f[2].key)
    h[#h + 1] = 'S'
    h[#h + 1] = states_read(f[2])
    out[#out + 1] = fmt(#h)
    append(out, h)
  end
  n = n + 1
end
out[2] = fmt(n)
if found.next then out[1] = found.next end
return out
