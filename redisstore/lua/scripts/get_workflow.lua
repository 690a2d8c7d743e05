-- weir3_get_workflow: Reads a workflow record (every field of its hash).
-- Read-only.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  workflow ID
-- ARGV[5]  "1": return it even when its retention passed (awaits)
-- Reply:   field/value list of the workflow hash (spec/keys.md), then "S"
--          and the task-state string; for a workflow of more than
--          500 tasks only "L": the record is live, and Go reads
--          the hash and the state string itself in one MULTI (HGETALL
--          straight to the client costs a third of passing 40,000 fields
--          through Lua, and keeps this script short whatever the size)
-- Errors:  NOTFOUND
--
--!include call.lua
--!include workflow.lua

begin(KEYS, ARGV)
read_clock()
IGNORE_EXPIRY = ARGV[5] == '1'
local w = load_wf(ARGV[4])
if not w then return redis.error_reply('NOTFOUND workflow "' .. ARGV[4] .. '"') end
if (tonumber(wget(w, W_TASKS)) or 0) > 500 then return {'L'} end -- READ_INLINE_TASKS
local out = redis.call('HGETALL', w.key)
out[#out + 1] = 'S'
out[#out + 1] = states_read(w)
return out
