// Package redisstore is weir's Redis store: engine.Store implemented as
// one atomic Lua call per transition, over any go-redis UniversalClient (a
// plain client, a failover client or a cluster client).
//
// The transitions (package lua: lua/scripts/*.lua, with their helpers
// from lua/include/*.lua, built into lua/build/) port the reference state
// machine engine.Model: the same states, reasons, pushes and queue order.
// On servers with Redis Functions they run as one function library, loaded
// once and called with FCALL; elsewhere (miniredis, Redis before 7) as
// scripts with EVALSHA. spec/keys.md lists every key and spec/scripts.md
// every transition's arguments and replies.
package redisstore
