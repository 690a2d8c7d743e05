// Package lua holds weir's transitions as the Lua that Redis runs.
//
// redisstore/lua/scripts has one file per transition and
// redisstore/lua/include the helpers they name with --!include; build/
// holds, committed, what the server is sent: one script per transition
// (for EVALSHA) and one function library with all of them
// (build/library.lua, for FUNCTION LOAD and FCALL). build/ is refreshed
// from the sources by
//
//	go test ./redisstore -run TestBuiltIsCurrent -update
//
// and that test fails while build/ is stale. Package redisstore loads
// Built; spec/scripts.md gives every transition's keys, arguments and
// replies.
package lua

import "embed"

// Built holds build/*.lua: the scripts and the function library as Redis
// runs them.
//
//go:embed build/*.lua
var Built embed.FS
