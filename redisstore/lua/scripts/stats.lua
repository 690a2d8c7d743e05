-- weir3_stats: What a metrics scrape reads (Store.Stats), at one instant:
-- the queues as queues.lua lists them, then per queue in the same order
-- its failed and cancelled counts (the members of its ended lists within
-- retention, one ZLEXCOUNT each) and the ready-at of the ready job a claim
-- takes next (the earlier of the unkeyed one a claim takes first,
-- ready_read.lua's READY.first, and the head of q:<q>:kr, one record read
-- each), then the size of each workflow state's index (one ZCARD each), then now. Read-only; its work is bounded by the number
-- of queues, not of jobs (but for stale elements at the head of a ready
-- list, which READY.first reads past).
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4..] the workflow states, in the order the reply counts them
-- Reply:   the queues reply, then per queue failed, cancelled, head
--          ready-at (ms, "" when none is ready), then per state asked its
--          count, then now (ms)
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include job.lua
--!include queue.lua
--!include ready_read.lua
--!include reply.lua

begin(KEYS, ARGV)
read_clock()
local out = {}
queues_reply(out)
local nq = tonumber(out[1])
-- an ended list's members are "<ended ms, 15 digits>:<job ID>" and its
-- sentinel, 65 '~', sorts after them (lists.lua)
local from = '-'
local cut = NOW - RETENTION + 1
if cut > 0 then from = '[' .. pad15(cut) end
local sentinel = '(' .. string.rep('~', 65)
-- head returns the ready-at of the first member of ready set k, or nil
local function head(id)
  if not id then return nil end
  local j = load_job(id)
  return j and tonumber(jget(j, F_READY) or '')
end
for x = 1, nq do
  local q = out[2 + (x - 1) * 8]
  out[#out + 1] = fmt(redis.call('ZLEXCOUNT', qkey(q, 'failed'), from, sentinel))
  out[#out + 1] = fmt(redis.call('ZLEXCOUNT', qkey(q, 'cancelled'), from, sentinel))
  local a, b = head(READY.first(q)), head(redis.call('ZRANGE', qkey(q, 'kr'), 0, 0)[1])
  local h = a
  if b and (not h or b < h) then h = b end
  out[#out + 1] = h and fmt(h) or ''
end
for x = 4, #ARGV do
  out[#out + 1] = fmt(redis.call('ZCARD', P .. 'wf:' .. ARGV[x]))
end
out[#out + 1] = NOW_S
return out
