-- weir3_list_jobs: Pages through one list of a queue: ready, delayed or
-- running jobs in the order the queue's set holds them, or failed,
-- cancelled or completed ones newest end first, from the job's end until
-- its end plus retention (spec/states.md, Job lists). Skips members whose
-- record is gone or no longer matches (an ID used again). Read-only.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  queue name
-- ARGV[5]  list: ready, delayed, running, failed, cancelled or completed
-- ARGV[6]  page size
-- ARGV[7]  cursor or "": "<score>:<id>" of the previous page's last job in
--          a waiting list ("l<position>:<id>" among a ready list's jobs
--          of priority 0, "k<score>:<id>" among its keyed jobs, which
--          follow its unkeyed ones), the member "<ended15>:<id>" in an
--          ended one
-- Reply:   next cursor or "", n, n job snapshots (17 strings each,
--          reply.lua)
--
--!include call.lua
--!include text.lua
--!include job.lua
--!include queue.lua
--!include ready_read.lua
--!include reply.lua

begin(KEYS, ARGV)
read_clock()
local q, list, limit, cursor = ARGV[4], ARGV[5], tonumber(ARGV[6]), ARGV[7]
local found, cur = {}, {}
local batch = limit + 1
-- collect appends to found the jobs of set k after the cursor cursor
-- (cursors of its members start with pre)
local function collect(k, cursor, pre, from, max)
  local min, cid, off = from or '-inf', false, 0
  if cursor ~= '' then
    local cs
    cs, cid = string.match(cursor, '^([^:]*):(.*)$')
    min = cs
  end
  local cscore = cid and tonumber(min)
  -- the state of a job the set holds (a record that says otherwise is
  -- on its way out of the set: skipped); the delayed set also holds open
  -- signal tasks with a timeout (promote.lua)
  local want = list == 'running' and 'running' or 'queued'
  while #found <= limit do
    local ms = redis.call('ZRANGEBYSCORE', k, min, max or '+inf', 'WITHSCORES', 'LIMIT', fmt(off), fmt(batch))
    for x = 1, #ms, 2 do
      local id, s = ms[x], ms[x + 1]
      -- members after the cursor: a higher score, or the same and a
      -- greater ID (a set orders equal scores by member)
      if not cid or tonumber(s) > cscore or bytes_less(cid, id) then
        local j = load_job(id)
        local jst = j and job_state(j)
        if jst == want or (jst == 'open' and list == 'delayed') then
          found[#found + 1] = j
          cur[#found] = pre .. s .. ':' .. id
          if #found > limit then break end
        end
      end
    end
    if #ms < 2 * batch then break end
    off = off + batch
  end
end

-- collect_list appends to found the live jobs of q's list (queue.lua,
-- READY.live) after the one at position pos (nil: from its head); a
-- cursor among them is "l<position>:<id>" (spec/keys.md, lt)
local function collect_list(pos)
  local lk = qkey(q, 'l')
  local head = (tonumber(qstate(q).lt) or 0) - redis.call('LLEN', lk) + 1
  local from = pos and math.max(0, pos + 1 - head) or 0
  while #found <= limit do
    local l = redis.call('LRANGE', lk, fmt(from), fmt(from + batch - 1))
    for i, id in ipairs(l) do
      local j = load_job(id)
      if READY.live(q, from + i - 1, id, j) then
        found[#found + 1] = j
        cur[#found] = 'l' .. fmt(head + from + i - 1) .. ':' .. id
        if #found > limit then break end
      end
    end
    if #l < batch then break end
    from = from + batch
  end
end

if list == 'ready' then
  -- claim order: q:<q>:r below priority 0, the list, the rest of
  -- q:<q>:r, then the keyed jobs (q:<q>:kr); a cursor names where it is
  local c = string.sub(cursor, 1, 1)
  local cut = READY.cut(q)
  local p0 = fmt(cut)
  if c == 'k' then
    collect(qkey(q, 'kr'), string.sub(cursor, 2), 'k')
  else
    local stage = 1
    if c == 'l' then
      stage = 2
    elseif cursor ~= '' and tonumber(string.match(cursor, '^[^:]*')) >= cut then
      stage = 3
    end
    if stage == 1 then collect(qkey(q, 'r'), cursor, '', nil, '(' .. p0) end
    if stage <= 2 and #found <= limit then
      collect_list(stage == 2 and tonumber(string.match(cursor, '^l(%-?%d+):')) or nil)
    end
    if #found <= limit then collect(qkey(q, 'r'), stage == 3 and cursor or '', '', p0) end
    if #found <= limit then collect(qkey(q, 'kr'), '', 'k') end
  end
elseif list == 'delayed' then
  collect(qkey(q, 'd'), cursor, '')
elseif list == 'running' then
  -- below the lease set's sentinel (queue.lua)
  collect(qkey(q, 'a'), cursor, '', nil, READY.A_BELOW)
else
  local k = qkey(q, list)
  -- below the sentinel, 65 '~' (lists.lua), which sorts after every member
  local max, min = '(~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~', '-'
  if cursor ~= '' then max = '(' .. cursor end
  local cut = NOW - RETENTION + 1
  if cut > 0 then min = '[' .. pad15(cut) end
  while #found <= limit do
    local ms = redis.call('ZREVRANGEBYLEX', k, max, min, 'LIMIT', '0', fmt(batch))
    for _, m in ipairs(ms) do
      local en, id = string.sub(m, 1, 15), string.sub(m, 17)
      local j = load_job(id)
      -- the record the member names: in that state, ended then, and not
      -- a task CancelWorkflow ended before it started
      if j and job_state(j) == list and pad15(tonumber(jget(j, F_ENDED)) or -1) == en
          and not (j.kind == 't' and string.find('WD', task_byte(j.wf, j.i), 1, true)) then
        found[#found + 1] = j
        cur[#found] = m
        if #found > limit then break end
      end
    end
    if #ms < batch then break end
    max = '(' .. ms[#ms]
  end
end
local out = {'', '0'}
local n = 0
for x, j in ipairs(found) do
  if x > limit then
    out[1] = cur[limit]
    break
  end
  put_snapshot(out, j)
  n = n + 1
end
out[2] = fmt(n)
return out
