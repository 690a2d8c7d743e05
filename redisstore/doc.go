// Package redisstore is weir's Redis store: engine.Store implemented as
// one atomic Lua call per transition, over any go-redis UniversalClient (a
// plain client, a failover client or a cluster client).
//
// The transitions (lua/scripts/*.lua in this package's directory, with
// their helpers from lua/include/*.lua; embedded, and built in memory when
// the package initializes: luabuild.go) port the reference state machine
// engine.Model: the same states, reasons, pushes and queue order.
// On servers with Redis Functions they run as one function library, loaded
// once and called with FCALL; elsewhere (miniredis, Redis before 7) as
// scripts with EVALSHA. spec/keys.md lists every key and spec/scripts.md
// every transition's arguments and replies.
package redisstore
