-- fast_ready.lua: the fast paths' reads and writes of a queue's ready set
-- (spec/scripts.md, Fast paths) that are not queue.lua's READY: whether
-- the set is empty, a claim's take of its first jobs or of the task a
-- finish handed over (fast_task.lua), and the push a hand-off holds back.
--
--!include call.lua
--!include queue.lua

-- FF.ready_empty reports whether queue q holds no unkeyed ready job and
-- no stale element (spec/keys.md q:<q>:l): its list absent and z unset,
-- so that a task pushed now would be alone and the claim's pop would
-- write nothing but the pop. A call that FF.chain left (CALL.le: the
-- queue whose list it found) is answered without a read, once.
function FF.ready_empty(q)
  -- FF.chain found q's list there, before this call wrote anything
  local le = CALL.le
  CALL.le = nil
  if le == q then return false end
  local s = qstate(q)
  return not s.z and not s.x and redis.call('EXISTS', qkey(q, 'l')) == 0
end

-- FF.ready_hold counts the push of a task of the default priority that a
-- finish hands to its claim instead of pushing it (FF.hand_off): the
-- list's push counter lt, as READY.push_ready counts it.
function FF.ready_hold(q)
  qs_set(q, 'lt', (tonumber(qstate(q).lt) or 0) + 1)
end

-- FF.ready_release pushes a held task that the claim did not take, at the
-- end of the list (its push counted when it was held).
function FF.ready_release(q, id)
  redis.call('RPUSH', qkey(q, 'l'), id)
end

-- FF.ready_take takes up to want of queue q's unkeyed ready jobs out for a
-- claim (READY.pop) and returns their IDs and whether q has none left. The
-- task a finish of this call handed over (CALL.hand, fast_task.lua) is
-- taken without a read: q held nothing else when it was held, and nothing
-- ran since; READY.pop would have said "none left" for want > 1 (the list
-- ran empty), not for want = 1.
function FF.ready_take(q, want)
  local h = CALL.hand
  if h then
    if h.q == q then
      h.taken = true
      return {h.id}, want > 1
    end
    FF.hand_drop()
  end
  return READY.pop(q, want)
end
