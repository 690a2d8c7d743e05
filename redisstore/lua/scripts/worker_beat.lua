-- weir3_worker_beat: Registers a worker or refreshes its record (spec/keys.md,
-- Keys of the worker registry), and removes up to ARGV[7] records of
-- workers whose time passed. Every key has the server TTL of the latest
-- expiry plus a minute, so a registry whose workers all died goes away.
--
-- KEYS[1]  partition prefix (call.lua): partition 0's
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  worker ID (engine.ValidID)
-- ARGV[5]  its record (JSON, engine.EncodeWorker)
-- ARGV[6]  TTL ms
-- ARGV[7]  most dead records to remove
-- Reply:   {now}
--
--!include call.lua

begin(KEYS, ARGV)
read_clock()
allow_full()
local kh, kt = P .. 'workers', P .. 'workers:t'
local exp = NOW + tonumber(ARGV[6])
local dead = redis.call('ZRANGEBYSCORE', kt, '-inf', NOW_S, 'LIMIT', 0, tonumber(ARGV[7]))
if #dead > 0 then
  redis.call('ZREM', kt, unpack(dead))
  redis.call('HDEL', kh, unpack(dead))
end
redis.call('ZADD', kt, exp, ARGV[4])
redis.call('HSET', kh, ARGV[4], NOW_S .. ':' .. fmt(exp) .. ':' .. ARGV[5])
local top = redis.call('ZRANGE', kt, -1, -1, 'WITHSCORES')
local ttl = math.max(tonumber(top[2]) - NOW, 0) + 60000
redis.call('PEXPIRE', kt, ttl)
redis.call('PEXPIRE', kh, ttl)
return {NOW_S}
