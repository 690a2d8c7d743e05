-- ready.lua: a job's ready-at (F_READY), from which a worker measures its
-- queue wait (the time from when it became ready to its claim) and, for a
-- promoted task, the promotion latency (from the end of the dependency
-- whose end promoted it to its push).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua

-- READY holds the functions of this file (one top-level local: a
-- script has at most 200).
local READY = {}

-- mark_ready records job j's ready-at rd: "<ms>" (push: now, or its due
-- time when pushed delayed; a sweep that readies it keeps that), or
-- "<ms>:<ms>" for a promoted task (promotion_ready). One field of the hash
-- of the job's record, overwritten by its next push.
function READY.mark_ready(j, rd)
  redis.call('HSET', j.key, j.pre .. F_READY, rd)
end

-- add_ready appends job j's ready-at that push left to its caller (later)
-- to hs, the fields of the HSET of j's hash the caller makes anyway.
function READY.add_ready(hs, j)
  if j.rd then
    hs[#hs + 1] = j.pre .. F_READY
    hs[#hs + 1] = j.rd
    j.rd = nil
  end
end

-- promotion_ready is the ready-at of a task that the end of task k of w
-- promotes now: "<now>:<k's end>". k's end is now when it ended in this
-- call (its state byte changed in it); a cascade drained by a later call
-- reads it, once per k.
function READY.promotion_ready(w, k)
  local en = w.so and w.so[k] and NOW_S
  if not en then
    local ke = w.kend
    if not ke then
      ke = {}
      w.kend = ke
    end
    en = ke[k]
    if not en then
      en = redis.call('HGET', w.key, 't' .. fmt(k) .. '.' .. F_ENDED) or NOW_S
      ke[k] = en
    end
  end
  return NOW_S .. ':' .. en
end

-- tail is the end of a packed Claimed (lease.lua's put_claimed) that
-- gives its ready-at: "\nr<ready-at>" (mark_ready's value) when the job
-- has one (every job pushed since ready-at was recorded), else "".
function READY.tail(rd)
  if rd then return '\nr' .. rd end
  return ''
end
