-- weir3_observe: Reads, at one instant, what queues, get_workflow and
-- get_job read, for many IDs and queues (the conformance suite's reads,
-- Store.Observe; not a transition). Read-only.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4 ..] the number of workflow IDs, then the IDs; the number of job
--          IDs, then the IDs; the number of queues, then their names
-- Reply:   the queues reply (reply.lua); per workflow "0" (not found) or
--          the count of what follows, get_workflow's reply; per job "0" or
--          "1" and its snapshot; per queue its ready, delayed and running
--          job IDs, each list a count and the IDs, in claim, due and
--          deadline order (the keyed ready jobs after the unkeyed ones,
--          by priority and push)
--
--!include call.lua
--!include workflow.lua
--!include job.lua
--!include reply.lua
--!include ready_read.lua

begin(KEYS, ARGV)
read_clock()
local a = 4
local function nextarg()
  a = a + 1
  return ARGV[a - 1]
end
local out = {}
queues_reply(out)
for _ = 1, tonumber(nextarg()) do
  local w = load_wf(nextarg())
  if not w then
    out[#out + 1] = '0'
  else
    local h = redis.call('HGETALL', w.key)
    h[#h + 1] = 'S'
    h[#h + 1] = states_read(w)
    out[#out + 1] = fmt(#h)
    append(out, h)
  end
end
for _ = 1, tonumber(nextarg()) do
  local j = load_job(nextarg())
  if not j then
    out[#out + 1] = '0'
  else
    out[#out + 1] = '1'
    put_snapshot(out, j)
  end
end
for _ = 1, tonumber(nextarg()) do
  local q = nextarg()
  for _, kind in ipairs({'r', 'd', 'a'}) do
    local ids
    if kind == 'r' then
      -- claim order: q:<q>:r below priority 0, the list (without its
      -- stale elements), the rest of q:<q>:r, then the keyed ready jobs
      ids = READY.all_ids(q)
      append(ids, redis.call('ZRANGE', qkey(q, 'kr'), '0', '-1'))
    elseif kind == 'a' then
      -- the leases, below the lease set's sentinel (queue.lua)
      ids = redis.call('ZRANGEBYSCORE', qkey(q, 'a'), '-inf', READY.A_BELOW)
    else
      ids = redis.call('ZRANGE', qkey(q, kind), '0', '-1')
    end
    out[#out + 1] = fmt(#ids)
    append(out, ids)
  end
end
return out
