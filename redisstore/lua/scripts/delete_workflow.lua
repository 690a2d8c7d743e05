-- weir3_delete_workflow: Removes an ended workflow and its jobs at once, as
-- the expiry of its retention would: its keys, its listing members and its
-- expiry entry and its ID in P wf:id (spec/states.md, DeleteWorkflow). Its jobs' members of
-- their queues' ended lists stay until trimmed; a listing skips them.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  workflow ID (validated in Go)
-- Reply:   {"OK"}
-- Errors:  NOTFOUND; NOTENDED <state> (the 2nd word is the workflow's
--          state); PENDING (drain.lua: drain, then send the call again)
--
--!include call.lua
--!include text.lua
--!include workflow.lua
--!include drain.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
if not drain_first() then
  finalize()
  return redis.error_reply(PENDING_REPLY)
end
local id = ARGV[4]
local w = load_wf(id)
if not w then return redis.error_reply('NOTFOUND workflow "' .. id .. '"') end
local st = wget(w, W_STATE)
if not wf_ended_state(st) then
  return redis.error_reply('NOTENDED ' .. st .. ' workflow "' .. id .. '" is ' .. st)
end
local m = wf_member(w)
redis.call('UNLINK', w.key, w.pkey, w.skey, wf_ikey(w), wf_nkey(w))
redis.call('ZREM', K_WF, m)
redis.call('ZREM', P .. 'wf:id', id)
redis.call('ZREM', P .. 'wf:' .. st, m)
redis.call('ZREM', K_EXPIRY, 'w:' .. st .. ':' .. m)
finalize()
return {'OK'}
