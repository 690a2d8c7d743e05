-- ready.lua: a job's ready-at (F_READY), from which a worker measures its
-- queue wait: the time from when it became ready to its claim.
--
--!include call.lua
--!include fields.lua

-- mark_ready records that job j is ready at ms at (push: now, or its due
-- time when pushed delayed; a sweep that makes it ready keeps that). One
-- field of the hash its push writes anyway, overwritten by the next push.
local function mark_ready(j, at)
  redis.call('HSET', j.key, j.pre .. F_READY, fmt(at))
end

-- put_ready ends a Claimed (lease.lua) with "@r<ms>": the job's ready-at,
-- when it has one (every job pushed since ready-at was recorded).
local function put_ready(out, rd)
  if rd then out[#out + 1] = '@r' .. rd end
end
