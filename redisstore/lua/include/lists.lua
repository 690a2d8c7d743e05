-- lists.lua: the ended lists of a queue, q:<q>:failed, q:<q>:cancelled
-- and q:<q>:completed (spec/keys.md): every job that ended in a call is
-- added by finalize (list_ended), with the members of its list that passed
-- retention trimmed in the same step, so that an entry lives from the
-- job's end until its end plus retention.
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

-- list_ended adds the jobs this call ended to their queue's ended list,
-- one ZADD and one trim per list.
local function list_ended()
  local ended = CALL.ended_j
  if not ended then return end
  local lists, order = {}, {}
  local prefix = pad15(NOW) .. ':'
  for _, j in ipairs(ended) do
    if not j.unlink and not j.unlisted then
      local st = job_state(j)
      if ended_state(st) then
        local k = qkey(job_queue(j), st)
        local l = lists[k]
        if not l then
          -- the sentinel first: a member longer than Redis's default
          -- zset-max-listpack-value keeps the list a skiplist, whose
          -- inserts cost the same however long it grows (a listpack is
          -- searched from its start); it sorts after every real member
          l = {'0', '~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~'}
          lists[k] = l
          order[#order + 1] = k
        end
        l[#l + 1] = '0'
        l[#l + 1] = prefix .. job_id(j)
      end
    end
  end
  local cut = NOW - RETENTION + 1
  for _, k in ipairs(order) do
    local l = lists[k]
    for i = 1, #l, 1000 do redis.call('ZADD', k, unpack(l, i, math.min(i + 999, #l))) end
    if cut > 0 then redis.call('ZREMRANGEBYLEX', k, '-', '(' .. pad15(cut)) end
  end
end
