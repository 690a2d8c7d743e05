-- weir3_workers: Lists the live workers (spec/keys.md, Keys of the worker
-- registry): those whose expiry lies ahead of now, expiring soonest first,
-- at most ARGV[4]. Read-only.
--
-- KEYS[1]  partition prefix (call.lua): partition 0's
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  most workers to return
-- Reply:   {now, total live, n, (id, "<beat ms>:<expiry ms>:<JSON>")…}
--
--!include call.lua

begin(KEYS, ARGV)
read_clock()
local kt = P .. 'workers:t'
local from = '(' .. NOW_S
local ids = redis.call('ZRANGEBYSCORE', kt, from, '+inf', 'LIMIT', 0, tonumber(ARGV[4]))
local out = {NOW_S, redis.call('ZCOUNT', kt, from, '+inf'), 0}
if #ids == 0 then return out end
local vs = redis.call('HMGET', P .. 'workers', unpack(ids))
for i, id in ipairs(ids) do
  if vs[i] then
    out[3] = out[3] + 1
    out[#out + 1] = id
    out[#out + 1] = vs[i]
  end
end
return out
