-- weir3_worker_remove: Removes a worker's record (a clean stop; spec/keys.md,
-- Keys of the worker registry). An unknown ID changes nothing. It reads
-- the clock as every call does, and with it the protocol marker
-- (read_clock): a partition of protocol 2, or under weir migrate, fails
-- there (ErrNeedsMigration) before anything is written.
--
-- KEYS[1]  partition prefix (call.lua): partition 0's
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  worker ID
-- Reply:   "OK" (a one-item array)
--
--!include call.lua

begin(KEYS, ARGV)
read_clock()
allow_full()
redis.call('ZREM', P .. 'workers:t', ARGV[4])
redis.call('HDEL', P .. 'workers', ARGV[4])
return {'OK'}
