package redisstore

import (
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// floorLibrary runs the Redis commands of a unit of work, with the shapes
// and sizes weir's transitions send, and nothing else: no decisions, no
// tables but the commands' replies, one reply of the size weir returns.
// What it costs the server is the floor under BenchmarkServerCPU's figures
// for the same unit on this data layout: what a transition would cost if
// its Lua did no work of its own.
//
// floor_chain: one chain step, the commands of one finish + claim call
// (a task completes, its dependent is promoted, claimed and leased), as
// MONITOR shows them. floor_plain: ARGV[1] plain jobs (IDs ARGV[2]..),
// each enqueued, claimed and finished with the commands of enqueue, claim
// and finish, the per-call commands once for the batch.
const floorLibrary = `#!lua name=weirfloor
redis.register_function('floor_return1', function(KEYS, ARGV) return 1 end)

redis.register_function('floor_chain', function(KEYS, ARGV)
  local P = KEYS[1]
  local wk = P .. 'w:c'
  redis.call('TIME')
  redis.call('HMGET', P .. 'seq', 'now', 'gc', 'lease', 'off', 'pend', 'cb')
  redis.call('HMGET', wk, 'st', 'x', 'c', 'cr', 't3.tk', 't3.ls', 't3.a', 't3.cr', 't3.dl', 't3', 't3.dn', 't3.s')
  redis.call('HINCRBY', wk, 't4.o', '-1')
  redis.call('HMGET', P .. 'q:qc:s', 'w', 'p', 'n', 'k', 'push')
  redis.call('ZADD', P .. 'q:qc:r', '1099511627776004', 'c/t3')
  redis.call('HINCRBY', wk, 'rem', '-1')
  redis.call('HSET', wk, 't3.en', '1796389032760', 't3.tk', '', 't3.ls', '3-a409e7a8eb648757.3 completed 0 running 0 c/t3 qc')
  redis.call('ZPOPMIN', P .. 'q:qc:r', '1')
  redis.call('HMGET', wk, 't4', 't4.a', 't4.dp')
  redis.call('HGET', wk .. ':p', '4')
  redis.call('HSET', wk, 't4.a', '1', 't4.tk', '4-65cad0289f0b0f66.4', 't4.dl', '1796389092760')
  redis.call('ZREM', P .. 'q:qc:a', 'c/t2')
  redis.call('ZADD', P .. 'q:qc:a', '1796389092760', 'c/t3')
  redis.call('SET', P .. 'claim:65cad0289f0b0f66', 'c/t3 4-65cad0289f0b0f66.4', 'PX', '60000')
  redis.call('SETRANGE', wk .. ':s', '2', 'cr')
  redis.call('ZCARD', P .. 'wait:any')
  redis.call('HSET', P .. 'q:qc:s', 'push', '4')
  redis.call('HSET', P .. 'seq', 'lease', '4')
  return {'1', 'c/t2', '', 'completed', '0', 'running', '', '1', 'c/t3', 'qc', '1', 'c/t3',
    't3|qc|0|3|1000|0||', '1796389032000', '', '', '1', '4-65cad0289f0b0f66.4', '1796389092760', '', '0',
    '1', 't2|qc|0|3|1000|0||', 'completed', '', '', ''}
end)

redis.register_function('floor_plain', function(KEYS, ARGV)
  local P = KEYS[1]
  local n = tonumber(ARGV[1])
  local rk, ak = P .. 'q:p:r', P .. 'q:p:a'
  local spec = 'p|0|3|1000|0'
  redis.call('TIME')
  redis.call('HMGET', P .. 'seq', 'now', 'gc', 'lease', 'off', 'pend', 'cb')
  redis.call('HMGET', P .. 'q:p:s', 'w', 'p', 'n', 'k', 'push')
  for i = 2, n + 1 do
    local key = P .. 'j:' .. ARGV[i]
    redis.call('HMGET', key, 's', 'en', 'h')
    redis.call('HSET', key, 'spec', spec, 'h', 'f00dfeedf00dfeed', 'c', '1796389032760', 's', 'queued')
    redis.call('ZADD', rk, string.format('%d', 1099511627776000 + i), ARGV[i])
  end
  local got = redis.call('ZPOPMIN', rk, n)
  local out, leased, active = {}, {}, {}
  for k = 1, #got, 2 do
    local id = got[k]
    local key = P .. 'j:' .. id
    redis.call('HMGET', key, 's', 'en', 'spec', 'a', 'e', 'p', 'c', 'xp')
    local tok = string.format('%d', k) .. '-65cad0289f0b0f66'
    redis.call('HSET', key, 's', 'running', 'a', '1', 'tk', tok, 'dl', '1796389092760')
    leased[#leased + 1] = id
    leased[#leased + 1] = tok
    active[#active + 1] = '1796389092760'
    active[#active + 1] = id
    local m = #out
    out[m + 1], out[m + 2], out[m + 3], out[m + 4], out[m + 5], out[m + 6] = id, spec, '1796389032760', '', '', '1'
    out[m + 7], out[m + 8], out[m + 9], out[m + 10], out[m + 11] = tok, '1796389092760', '', '0', '0'
  end
  redis.call('ZADD', ak, unpack(active))
  redis.call('SET', P .. 'claim:65cad0289f0b0f66', table.concat(leased, ' '), 'PX', '60000')
  local gone = {}
  for k = 1, #got, 2 do
    local id = got[k]
    local key = P .. 'j:' .. id
    redis.call('HMGET', key, 'tk', 'ls', 'a', 'cr', 'dl', 'spec', 's', 'en')
    redis.call('HSET', key, 's', 'completed', 'en', '1796389032760', 'tk', '', 'ls', '1-65cad0289f0b0f66')
    redis.call('PEXPIREAT', key, '1796993832762')
    gone[#gone + 1] = id
    local m = #out
    out[m + 1], out[m + 2], out[m + 3], out[m + 4], out[m + 5], out[m + 6], out[m + 7] = id, '', 'completed', '0', '', '', '0'
  end
  redis.call('ZREM', ak, unpack(gone))
  redis.call('ZCARD', P .. 'wait:any')
  redis.call('HSET', P .. 'q:p:s', 'push', '4')
  redis.call('HSET', P .. 'seq', 'lease', '4', 'now', '1796389032762')
  return out
end)
`

// BenchmarkServerCPUFloor measures, like BenchmarkServerCPU (cpuClients
// clients at once, on a private redis-server or the callgrind one of
// WEIR_CALLGRIND), what floorLibrary's units cost: a call that returns 1
// (the cost of a call itself: network, parsing, FCALL), a chain step's
// commands alone (one call a step, as the chain-step unit), and a plain
// job's commands alone (50 jobs a call, as the plain-job unit claims and
// finishes them; BenchmarkServerCPU enqueues 100 a call).
func BenchmarkServerCPUFloor(b *testing.B) {
	if !realRedis() && callgrindFromEnv() == nil {
		b.Skip("set WEIR_REDIS_URL to measure on a private redis-server (or WEIR_CALLGRIND)")
	}
	type unit struct {
		name string
		per  int // units a call
		call func(rdb *redis.Client, c, i int) error
	}
	units := []unit{
		{"return1", 1, func(rdb *redis.Client, c, i int) error {
			return rdb.FCall(bg, "floor_return1", []string{"weir:{f:0}:"}).Err()
		}},
		{"chain-step", 1, func(rdb *redis.Client, c, i int) error {
			return rdb.FCall(bg, "floor_chain", []string{"weir:{f" + strconv.Itoa(c) + ":0}:"}).Err()
		}},
		{"plain-job", 50, func(rdb *redis.Client, c, i int) error {
			args := []any{"50"}
			for k := range 50 {
				args = append(args, strconv.Itoa(i*50+k))
			}
			return rdb.FCall(bg, "floor_plain", []string{"weir:{f" + strconv.Itoa(c) + ":0}:"}, args...).Err()
		}},
	}
	for _, u := range units {
		b.Run(u.name, func(b *testing.B) {
			rdb, _, cg := cpuStore(b, PathFunctions)
			if err := rdb.FunctionLoadReplace(bg, floorLibrary).Err(); err != nil {
				b.Fatal(err)
			}
			calls := b.N/u.per/cpuClients + 1
			m := startMeter(b, rdb, cg)
			var wg sync.WaitGroup
			b.ResetTimer()
			for c := range cpuClients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range calls {
						if err := u.call(rdb, c, i); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			m.report(b, float64(calls*cpuClients*u.per))
		})
	}
}
