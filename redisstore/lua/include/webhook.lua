-- webhook.lua: a workflow's webhook delivery (spec/states.md, Webhooks).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include plain.lua

-- The workflow-hash fields of a plan's webhook (spec/keys.md): its
-- delivery job's spec, fingerprint and payload, written by Go at submit.
WEBHOOK.SPEC, WEBHOOK.HASH, WEBHOOK.BODY = 'hk', 'hk.f', 'hk.b'
WEBHOOK.SUFFIX = '@webhook'
-- the workflow's run (absent: 1), the field a re-run increments
-- (rerun_workflow.lua): the delivery of run n > 1 is "<wf>@webhook.<n>"
WEBHOOK.RUN = 'run'

-- WEBHOOK.deliver writes the delivery job of ended workflow w, if it has a
-- webhook, as enqueue.lua writes a plain job: a live job under the
-- delivery's ID (that of its run) is left as it is.
function WEBHOOK.deliver(w)
  local spec = wget(w, WEBHOOK.SPEC)
  if not spec then return end
  local id = w.id .. WEBHOOK.SUFFIX
  local run = wget(w, WEBHOOK.RUN)
  if run then id = id .. '.' .. run end
  local key = P .. 'j:' .. id
  local old = redis.call('HMGET', key, F_STATE, F_ENDED)
  if old[1] and not plain_expired(old[2]) then return end
  if old[1] then
    -- the old record's retention passed: it goes first
    redis.call('ZREM', K_EXPIRY, 'j:' .. id)
    redis.call('UNLINK', key)
  end
  local v = redis.call('HMGET', w.key, WEBHOOK.HASH, WEBHOOK.BODY)
  write_plain({string.match(spec, '^[^|]*'), '0', spec, '1', v[2], '0', v[1]}, id, key, 0, 0, {})
end
