-- plain.lua: writing a new plain job from a call's arguments.
--
--!include call.lua
--!include fields.lua
--!include job.lua
--!include queue.lua

-- write_plain writes plain job id (key: its hash) from the enqueue values
-- at argv[b + 1 .. b + 7], argv being the call's ARGV (queue, priority,
-- spec, has payload, payload, run-at, fingerprint: enqueue.lua's order;
-- argv[b + 9], when given and not empty, its traceparent), and pushes it,
-- ready or delayed until ra (ms; now or before: ready), adding to fx.
local function write_plain(argv, id, key, b, ra, fx)
  local j = new_job('j', id, key, '', false, false, false, 'queued', argv[b + 3])
  j.q, j.pr = argv[b + 1], tonumber(argv[b + 2])
  bag('jobs')[id] = j
  local hs = {F_SPEC, argv[b + 3], F_HASH, argv[b + 7], F_CREATED, NOW_S, F_STATE, 'queued'}
  if argv[b + 4] == '1' then
    hs[#hs + 1] = F_PAYLOAD
    hs[#hs + 1] = argv[b + 5]
  end
  local tp = argv[b + 9]
  if tp and tp ~= '' then
    hs[#hs + 1] = F_TRACE
    hs[#hs + 1] = tp
  end
  if ra > NOW then
    hs[#hs + 1] = F_RUN_AT
    hs[#hs + 1] = fmt(ra)
  end
  push(j, ra, fx, true)
  READY.add_ready(hs, j)
  redis.call('HSET', key, unpack(hs))
  return j
end
