-- checkpoint.lua: where a job's checkpoint and progress live
-- (spec/keys.md): a plain job's checkpoint in its own hash (field "ck"); a
-- task's or undo's in its workflow's payload hash (field "<prefix>ck", e.g.
-- "t3.ck"), with "<prefix>ck" = "1" in the workflow hash so that a claim,
-- which reads that hash anyway, reads the payload hash only for a job
-- that has one. Progress is "<prefix>pg" in the job's hash: "<percent>
-- <at ms> <message>".
--
--!include call.lua

-- task_checkpoint returns the checkpoint of task or undo job j whose flag
-- field (read with its other fields) is flag, or false.
local function task_checkpoint(j, flag)
  if not flag then return false end
  return redis.call('HGET', j.wf.pkey, j.pre .. 'ck')
end
