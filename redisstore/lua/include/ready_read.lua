-- ready_read.lua: the reads of a queue's unkeyed ready jobs that no
-- hot-path transition makes (listings, Stats, the conformance reads, a
-- purge), apart from queue.lua's READY functions so that the scripts that
-- push and claim do not define them (on the scripts path every call runs
-- its script's definitions).
--
--!include call.lua
--!include text.lua
--!include job.lua
--!include queue.lua

-- READY.first returns the ID of the unkeyed ready job of q that a claim
-- takes next, or nil. Past stale elements at the list's head it reads
-- them (at most x of them, by the rule of spec/keys.md from the head).
function READY.first(q)
  local s = qstate(q)
  local rk = qkey(q, 'r')
  if s.z then
    local lo = redis.call('ZRANGEBYSCORE', rk, '-inf', '(' .. fmt(READY.cut(q)), 'LIMIT', '0', '1')
    if lo[1] then return lo[1] end
  end
  local lk = qkey(q, 'l')
  if not s.x then
    local id = redis.call('LINDEX', lk, '0')
    if id then return id end
  else
    local c, left, from = {}, {}, 0
    while true do
      local l = redis.call('LRANGE', lk, fmt(from), fmt(from + 99))
      for _, id in ipairs(l) do
        local k = left[id]
        if k == nil then
          k = tonumber(c[id] or redis.call('HGET', qkey(q, 'lx'), id)) or 0
          c[id] = k
        end
        if k == 0 then return id end
        left[id] = k - 1
      end
      if #l < 100 then break end
      from = from + 100
    end
  end
  if s.z then return redis.call('ZRANGE', rk, '0', '0')[1] end
  return nil
end

-- READY.live says whether the element at index i of q's list, of job j
-- (loaded; nil when gone) with ID id, is its live one: j is queued, and
-- id has no stale element, or this is its last element and j is not
-- delayed (spec/keys.md q:<q>:l).
function READY.live(q, i, id, j)
  if not j or job_state(j) ~= 'queued' then return false end
  if not qstate(q).x or not redis.call('HGET', qkey(q, 'lx'), id) then return true end
  return redis.call('LPOS', qkey(q, 'l'), id, 'RANK', '-1') == i and not redis.call('ZSCORE', qkey(q, 'd'), id)
end

-- READY.list_ids returns q's list without its stale elements, in order
-- (a read of the whole list, where a purge and the conformance reads read
-- whole sets).
function READY.list_ids(q)
  local l = redis.call('LRANGE', qkey(q, 'l'), '0', '-1')
  if not qstate(q).x then return l end
  local h = redis.call('HGETALL', qkey(q, 'lx'))
  local left = {}
  for i = 1, #h, 2 do left[h[i]] = tonumber(h[i + 1]) end
  local out = {}
  for _, id in ipairs(l) do
    local k = left[id] or 0
    if k > 0 then left[id] = k - 1 else out[#out + 1] = id end
  end
  return out
end

-- READY.all_ids returns q's unkeyed ready jobs in claim order: q:<q>:r
-- below READY.cut, the list without its stale elements, the rest of
-- q:<q>:r (whole reads, where a purge and the conformance reads read
-- whole sets).
function READY.all_ids(q)
  local rk, p0 = qkey(q, 'r'), fmt(READY.cut(q))
  local ids = redis.call('ZRANGEBYSCORE', rk, '-inf', '(' .. p0)
  append(ids, READY.list_ids(q))
  append(ids, redis.call('ZRANGEBYSCORE', rk, p0, '+inf'))
  return ids
end
