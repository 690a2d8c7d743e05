-- deadline.lua: a workflow's deadline (spec/states.md, Deadline): a marker
-- "<workflow>/!deadline" in the delayed set of its first task's queue,
-- scored with the deadline; a sweep that finds it due cancels the
-- workflow (cancel.lua). The workflow's field CANCEL.AT holds the deadline
-- (absent: none), CANCEL.HIT is "1" once the deadline cancelled it.
--
--!include call.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua

-- CANCEL holds the functions of cancels (this file and cancel.lua): one
-- local for all of them (the library's top level has few registers left).
-- It is declared here, not in cancel.lua, because a deadline is a cancel
-- and this file comes first: cascade.lua includes it for drop_deadline (at
-- a workflow's end), submit and rerun_workflow for the marker, and
-- cancel.lua, which includes cascade.lua, cannot come before it.
local CANCEL = {AT = 'wdl', HIT = 'wdh', SUFFIX = '/!deadline'}

-- CANCEL.marker_queue returns the queue that holds workflow w's marker: its
-- first task's.
function CANCEL.marker_queue(w)
  return string.match(task_spec(w, 1), '^[^|]*|([^|]*)')
end

-- CANCEL.drop_deadline takes workflow w's deadline marker out of its
-- queue's delayed set (a workflow without a deadline: nothing), once a
-- call.
function CANCEL.drop_deadline(w)
  if not wget(w, CANCEL.AT) then return end
  w.m[CANCEL.AT] = false
  local m = w.id .. CANCEL.SUFFIX
  redis.call('ZREM', qkey(CANCEL.marker_queue(w), 'd'), m)
end
