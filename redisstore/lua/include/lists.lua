-- lists.lua: the ended lists of a queue, q:<q>:failed, q:<q>:cancelled
-- and q:<q>:completed (spec/keys.md): every job that ended in a call is
-- added by finalize (LISTS.ended), and the queue's lists lose their members
-- past retention when one may have passed it, at most once a second
-- (LISTS.trim), so that an entry lives from the job's end until at least
-- its end plus retention; every read of a list skips the members past
-- retention (list_jobs.lua, stats.lua).
--
--!include call.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--
-- Members are "<ended ms, 15 digits>:<job ID>", all scores 0, so that a
-- list reads newest first with ZREVRANGEBYLEX and its entries past
-- retention leave with one ZREMRANGEBYLEX. Not listed: a plain job that
-- ended with retention 0 and was unlinked (j.unlink), and a task that
-- CancelWorkflow ended before it started (never marked ended, or marked
-- with j.unlisted for its waiters only).

-- Every list also holds the sentinel member, 65 bytes of '~' (written
-- inline: the library has no local to spare), after every "<15
-- digits>:<id>" member; listings read below it.

-- LISTS (one top-level local) holds this file's functions.
local LISTS = {}

-- LISTS.due says whether a trim of a queue's ended lists is due, from its
-- state's et (the chain step reads it itself: fast_chain.lua); LISTS.trim
-- removes the members past retention from queue q's three ended lists
-- when a trim is due: the queue state's et (spec/keys.md) is absent,
-- or behind the cut (now - retention + 1), or more than a second ahead of
-- now (a test clock that went back). A trim is one ZREMRANGEBYLEX and one
-- ZRANGE of the oldest member left per list, and sets et to the end of the
-- oldest member left (now when none), but at least cut + 1 s: the lists
-- are trimmed when something in them may have passed retention, and at
-- most once a second. Every call that adds to an ended list of q calls it
-- (LISTS.ended and the fast paths), so that they write the same.
--
-- As a function, et's number comes from LISTS.m (kept from one call to
-- the next: et changes at most once a second per queue, and a tonumber
-- costs some 2,000 instructions), made on first use and emptied past 64
-- entries.
function LISTS.due(et)
  local cut = NOW - RETENTION + 1
  if cut <= 0 then return false end
  if not et then return true end
  local due
  if IS_FUNCTION then
    local m = LISTS.m
    if not m or LISTS.mn >= 64 then
      m = {}
      LISTS.m, LISTS.mn = m, 0
    end
    due = m[et]
    if due == nil then
      due = tonumber(et) or false
      m[et] = due
      LISTS.mn = LISTS.mn + 1
    end
  else
    due = tonumber(et)
  end
  return not (due and cut <= due and due <= NOW + 1000)
end

function LISTS.trim(q)
  if not LISTS.due(qstate(q).et) then return end
  local cut = NOW - RETENTION + 1
  local to, low = '(' .. pad15(cut), NOW
  local function one(st)
    local k = qkey(q, st)
    redis.call('ZREMRANGEBYLEX', k, '-', to)
    -- the sentinel (or nothing) when the list holds no job
    local e = tonumber(string.sub(redis.call('ZRANGE', k, '0', '0')[1] or '~', 1, 15))
    if e and e < low then low = e end
  end
  one('completed')
  one('failed')
  one('cancelled')
  qs_set(q, 'et', math.max(low, cut + 1000))
end

-- LISTS.ended adds the jobs this call ended to their queue's ended list,
-- one ZADD per list, and trims the lists of their queues (LISTS.trim).
function LISTS.ended()
  local ended = CALL.ended_j
  if not ended then return end
  local lists, order = {}, {}
  local prefix = pad15(NOW) .. ':'
  for _, j in ipairs(ended) do
    if not j.unlink and not j.unlisted then
      local st = job_state(j)
      if ended_state(st) then
        local q = job_queue(j)
        local k = qkey(q, st)
        local l = lists[k]
        if not l then
          -- the sentinel first: a member longer than Redis's default
          -- zset-max-listpack-value keeps the list a skiplist, whose
          -- inserts cost the same however long it grows (a listpack is
          -- searched from its start); it sorts after every real member
          l = {'0', '~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~'}
          lists[k] = l
          order[#order + 1] = k
          order[k] = q
        end
        l[#l + 1] = '0'
        l[#l + 1] = prefix .. job_id(j)
      end
    end
  end
  for _, k in ipairs(order) do
    local l = lists[k]
    for i = 1, #l, 1000 do redis.call('ZADD', k, unpack(l, i, math.min(i + 999, #l))) end
    LISTS.trim(order[k])
  end
end
