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
--          a waiting list ("k<score>:<id>" among a ready list's keyed
--          jobs, which follow its unkeyed ones), the member "<ended15>:<id>" in an ended one
-- Reply:   next cursor or "", n, n job snapshots (17 strings each,
--          reply.lua)
--
--!include call.lua
--!include text.lua
--!include job.lua
--!include queue.lua
--!include reply.lua

begin(KEYS, ARGV)
read_clock()
local q, list, limit, cursor = ARGV[4], ARGV[5], tonumber(ARGV[6]), ARGV[7]
local found, cur = {}, {}
local batch = limit + 1
-- collect appends to found the jobs of set k after the cursor cursor
-- (cursors of its members start with pre)
local function collect(k, cursor, pre)
  local min, cid, off = '-inf', false, 0
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
    local ms = redis.call('ZRANGEBYSCORE', k, min, '+inf', 'WITHSCORES', 'LIMIT', fmt(off), fmt(batch))
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

if list == 'ready' or list == 'delayed' or list == 'running' then
  -- a ready list's keyed jobs (q:<q>:kr) follow its unkeyed ones; a
  -- cursor among them starts with "k"
  if list == 'ready' and string.sub(cursor, 1, 1) == 'k' then
    collect(qkey(q, 'kr'), string.sub(cursor, 2), 'k')
  else
    collect(qkey(q, ({ready = 'r', delayed = 'd', running = 'a'})[list]), cursor, '')
    if list == 'ready' and #found <= limit then collect(qkey(q, 'kr'), '', 'k') end
  end
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
