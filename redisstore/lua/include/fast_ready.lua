-- fast_ready.lua: every read and write of a queue's ready set that the
-- fast paths make (spec/scripts.md, Fast paths), in three functions of FF,
-- so that a change of the ready set's layout changes them here: a push,
-- whether the set is empty, and a claim's take of its first jobs (or of
-- the task a finish handed over: fast_task.lua).
--
--!include call.lua
--!include queue.lua

-- FF.ready_put pushes jobs into queue q's ready set: its arguments are
-- score-ID pairs, a score a string ((priority + 1000) * 2^40 + push
-- counter, queue.lua's push), in push order.
function FF.ready_put(q, ...)
  redis.call('ZADD', qkey(q, 'r'), ...)
end

-- FF.ready_empty reports whether queue q's ready set is empty.
function FF.ready_empty(q)
  return redis.call('EXISTS', qkey(q, 'r')) == 0
end

-- FF.ready_take takes up to want of queue q's first ready jobs out of its
-- set for a claim and returns their IDs and the step between them: 1 for
-- the IDs alone (ZRANGE, then ZREM by name: the members ZPOPMIN would pop,
-- without the scores the server would format, 5,700 instructions a job),
-- 2 for ZPOPMIN's ID-score pairs (one job, or more than 1,000). A claim
-- that got fewer than step * want IDs found the set empty. The task a
-- finish of this call handed over (CALL.hand, fast_task.lua) is taken
-- without a read: the set held nothing else when it was pushed, and
-- nothing ran since.
function FF.ready_take(q, want)
  local h = CALL.hand
  if h then
    if h.q == q then
      h.taken = true
      return {h.id}, 1
    end
    FF.hand_drop()
  end
  local rk = qkey(q, 'r')
  if want > 1 and want <= 1000 then
    local got = redis.call('ZRANGE', rk, '0', fmt(want - 1))
    if #got > 0 then redis.call('ZREM', rk, unpack(got)) end
    return got, 1
  end
  return redis.call('ZPOPMIN', rk, fmt(want)), 2
end
