-- fields.lua: the names of the stored fields (spec/keys.md), one constant
-- each. A job's field is its prefix (a plain job: none; task i of a
-- workflow: "t<i>."; that task's undo: "u<i>.") followed by one of the F_
-- names; a workflow's own fields are the W_ names.

local F_SPEC = 'spec' -- plain job: "queue|priority|maxAttempts|backoffMs|timeoutMs[|maxExpiries][|u<digest>|U<digest>]"
local F_HASH = 'h' -- plain job: spec fingerprint; workflow: plan hash
local F_CREATED = 'c' -- plain job, undo job, workflow
local F_PAYLOAD = 'p' -- plain job (tasks and undos: the workflow's :p hash)
local F_STATE = 's' -- plain and undo jobs (tasks: the workflow's :s string)
local F_ATTEMPT = 'a'
-- lease expiries that cost no attempt (absent: none); the attempts counted
-- against max attempts are F_ATTEMPT minus these
local F_EXPIRIES = 'xp'
local F_RUN_AT = 'ra'
local F_TOKEN = 'tk'
local F_DEADLINE = 'dl'
local F_CANCEL = 'cr'
local F_RESULT = 'r'
local F_ERROR = 'e'
local F_ENDED = 'en'
local F_EXPIRES = 'x' -- workflow (a plain job's is its end plus retention)
-- the token of the job's last finish, then a space and the Settled it
-- returned (none for a plain job that ended: its state is the answer)
local F_LAST_SETTLED = 'ls'
local F_OPEN = 'o' -- task: dependencies not ended yet
-- OnFailure task: "1" once a dependency ended not completed (cascade.lua)
local F_DEP_FAILED = 'nf'
local F_DEPS = 'dp' -- task: indices of its dependencies, in After order
-- task: its dependents, ascending: "<index> <name> <queue> <priority>" each,
-- joined by ";" (what a promotion needs, computed at submit)
local F_DEPENDENTS = 'dn'
local F_BLOCKERS = 'b' -- undo: undos of its nearest compensated descendants not ended
local F_PARENTS = 'pa' -- undo: indices of the undos it blocks
local F_SIGNAL = 'sg' -- signal task: the kind of the signal that ended it
-- plain job and workflow: the W3C traceparent of its enqueue or submit
-- (absent: none), handed back with every claim (trace.lua)
local F_TRACE = 'tp'
-- a job's ready-at, ms: when its last push made it ready, or, pushed
-- delayed, when it is due (ready.lua)
local F_READY = 'rd'

local W_STATE = 'st'
local W_REASON = 'rs'
local W_FAIL_FAST = 'ff'
local W_UNDO_ON_CANCEL = 'uoc'
local W_CANCEL = 'cr'
local W_CANCEL_UNDO = 'cu'
local W_CANCEL_AT = 'cat'
local W_ENDED = 'en'
local W_EXPIRES = 'x'
local W_TASKS = 'n'
local W_REMAINING = 'rem'
local W_UNABSORBED = 'ua'
local W_FAILED_BEFORE_CANCEL = 'fbc'
local W_FAIL_FAST_FIRED = 'fff'
local W_UNDOS_REMAINING = 'urem'
local W_UNDO_FAILED = 'ufail'
local W_ALWAYS = 'alw' -- one byte per task, "1" when Always
local W_HAS_UNDO = 'und' -- one byte per task, "1" when it has an undo
local W_NAMES = 'names'
