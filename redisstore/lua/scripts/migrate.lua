-- weir3_migrate: One bounded step of weir migrate in one partition
-- (spec/scripts.md, Upgrade from protocol 2): converts a partition that
-- protocol 2 wrote to protocol 3's layout (spec/keys.md), resuming where
-- the last step stopped. The partition's state is its keys:
--   P seq a string "3"             protocol 3: nothing to do;
--   P seq absent, P mig absent     nothing written there: the marker only;
--   P seq protocol 2's seq hash    the first step: checks every queue's push
--                                  counter, renames the hash to P mig (with
--                                  the cursor, field mq) and makes P seq a
--                                  list (the migration's marker), so that
--                                  from here protocol 2's calls and protocol
--                                  3's both fail at their first read of it
--                                  (WRONGTYPE), nothing written;
--   P mig present                  a migration under way.
-- A step then takes the queues of P queues in byte order from the cursor:
-- the ready jobs of priority 0 (score in [1000 * 2^40, 1001 * 2^40) of
-- q:<q>:r: with the queue's push counter below 2^40, exactly those) move,
-- in ascending score order, to the end of q:<q>:l and leave the zset; a
-- queue whose zset still holds jobs (other priorities) gets q:<q>:s z = 1.
-- After the last queue, P mig becomes P seq3 (without mq) and P seq the
-- string "3". A dry run writes nothing and counts with ZCOUNT.
-- The index of workflow IDs (P wf:id, spec/keys.md): a partition of
-- protocol 3 whose seq hash has now but not ix (written before the index
-- existed, or converted from protocol 2 by the steps above) gets it built
-- by steps of its own while the partition stays in use: each adds the IDs
-- of at most ARGV[4] members of P wf, in order from the cursor (seq hash
-- field ixc, the last member done), and the last sets ix = 1 and drops
-- ixc. A call of this build keeps the index itself from then on (a submit
-- adds its ID, a delete or the expiry sweep removes it), so members added
-- or removed meanwhile are right whichever side of the cursor they are.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua; unused)
-- ARGV[4]  the most ready jobs this step moves, and the most queues it
--          looks at (1 to 1,000)
-- ARGV[5]  "1": a dry run (nothing written), "" otherwise
-- ARGV[6]  a dry run's cursor: the queue to go on from ("" the first)
-- ARGV[7]  "1" (what redisstore passes): move the ready jobs of priority 0
--          to the ready lists; "" converts the seq hash and the marker only
-- Reply:   {state, moved, queues, flagged, next, indexed}: state "was3"
--          (protocol 3 already, its index of IDs built), "none" (nothing
--          written in the partition: a real run wrote the marker), "more"
--          (stopped at queue next; run again), "done" (this step finished
--          the conversion; the index steps follow), "index" (an index step
--          stopped at member next; run again), "indexed" (this index step
--          finished the index), "counter" (nothing written: queue next's
--          push counter passed 2^40, so its priority-0 jobs cannot be told
--          from their scores) or "odd" (P seq is neither a string nor a
--          hash and no migration is under way: not written by weir;
--          nothing written); moved the ready jobs moved (a dry run: that
--          would move), queues the queues finished, flagged those of them
--          whose zset keeps other priorities; indexed the IDs an index step
--          added (a dry run: the members of P wf an index build would read,
--          counted when the conversion ends or in a partition of protocol 3
--          without ix).
--
--!include call.lua
--!include text.lua

begin(KEYS, ARGV)
allow_full()
local K_MARK, K_MIG = P .. 'seq', P .. 'mig'
local step = tonumber(ARGV[4])
local dry = ARGV[5] == '1'
local reply = function(state, moved, queues, flagged, nxt, indexed)
  return {state, fmt(moved), fmt(queues), fmt(flagged), nxt, fmt(indexed or 0)}
end

local mark = redis.pcall('GET', K_MARK)
if type(mark) == 'string' then
  -- protocol 3: an index step when the index of IDs is not built yet
  local v = redis.call('HMGET', K_SEQ, 'now', 'ix', 'ixc')
  if not v[1] or v[2] == '1' then return reply('was3', 0, 0, 0, '') end
  if dry then return reply('was3', 0, 0, 0, '', redis.call('ZCARD', K_WF)) end
  local lo = '-'
  if v[3] then lo = '(' .. v[3] end
  local ms = redis.call('ZRANGEBYLEX', K_WF, lo, '+', 'LIMIT', '0', fmt(step))
  for i = 1, #ms, 500 do
    local args = {}
    for x = i, math.min(i + 499, #ms) do
      args[#args + 1] = '0'
      args[#args + 1] = string.sub(ms[x], 17)
    end
    redis.call('ZADD', P .. 'wf:id', unpack(args))
  end
  if #ms == step then
    redis.call('HSET', K_SEQ, 'ixc', ms[#ms])
    return reply('index', 0, 0, 0, ms[#ms], #ms)
  end
  redis.call('HDEL', K_SEQ, 'ixc')
  redis.call('HSET', K_SEQ, 'ix', '1')
  return reply('indexed', 0, 0, 0, '', #ms)
end
local migrating = redis.call('EXISTS', K_MIG) == 1
if not mark and not migrating then
  if not dry then redis.call('SET', K_MARK, '3') end
  return reply('none', 0, 0, 0, '')
end

local names = {}
if ARGV[7] == '1' then
  names = redis.call('HKEYS', K_QUEUES)
  table.sort(names, bytes_less)
end
if not migrating then
  if type(redis.pcall('HEXISTS', K_MARK, 'now')) ~= 'number' then
    return reply('odd', 0, 0, 0, '')
  end
  -- protocol 2's seq hash: every queue's scores must tell priorities apart
  for _, q in ipairs(names) do
    local push = tonumber(redis.call('HGET', P .. 'q:' .. q .. ':s', 'push'))
    if push and push >= PRIO_UNIT then return reply('counter', 0, 0, 0, q) end
  end
  if not dry then
    redis.call('RENAME', K_MARK, K_MIG)
    redis.call('RPUSH', K_MARK, 'weir: weir migrate is converting this partition to protocol 3')
  end
end

local lo = 1000 * PRIO_UNIT
local hi = '(' .. fmt(1001 * PRIO_UNIT)
local cur = ARGV[6]
if not dry then cur = redis.call('HGET', K_MIG, 'mq') or '' end
local moved, queues, flagged, visits = 0, 0, 0, 0
for _, q in ipairs(names) do
  if cur == '' or not bytes_less(q, cur) then
    if visits == step or moved == step then
      if not dry then redis.call('HSET', K_MIG, 'mq', q) end
      return reply('more', moved, queues, flagged, q)
    end
    visits = visits + 1
    local r = P .. 'q:' .. q .. ':r'
    local left
    if dry then
      local n = redis.call('ZCOUNT', r, fmt(lo), hi)
      moved = moved + n
      left = redis.call('ZCARD', r) - n
    else
      local room = step - moved
      local ids = redis.call('ZRANGEBYSCORE', r, fmt(lo), hi, 'LIMIT', '0', fmt(room))
      if #ids > 0 then
        redis.call('ZREM', r, unpack(ids))
        redis.call('RPUSH', P .. 'q:' .. q .. ':l', unpack(ids))
        moved = moved + #ids
      end
      if #ids == room then
        -- there may be more: the next step goes on in this queue
        redis.call('HSET', K_MIG, 'mq', q)
        return reply('more', moved, queues, flagged, q)
      end
      left = redis.call('ZCARD', r)
      if left > 0 then redis.call('HSET', P .. 'q:' .. q .. ':s', 'z', '1') end
    end
    queues = queues + 1
    if left > 0 then flagged = flagged + 1 end
  end
end
if not dry then
  redis.call('RENAME', K_MIG, K_SEQ)
  redis.call('HDEL', K_SEQ, 'mq')
  redis.call('DEL', K_MARK)
  redis.call('SET', K_MARK, '3')
end
-- the index of IDs: built by the next steps (above); a dry run counts
-- what they would read
local indexed = 0
if dry then indexed = redis.call('ZCARD', K_WF) end
return reply('done', moved, queues, flagged, '', indexed)
