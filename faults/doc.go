//go:build unix

// Package faults holds weir's fault suite: tests that run the engine against
// real redis-server processes while Redis is killed, restarted, starved of
// memory, has its script cache flushed, loses replies or drops pub/sub
// connections, and an invariant checker that reads the store after every
// fault.
//
// The tests carry the build tag "faults", so the plain test command skips
// them; run them with
//
//	go test -tags faults ./faults/
//
// They need redis-server on PATH. WEIR_FAULT_SCALE (default 1) multiplies
// their counts for longer runs. The helpers in this package (Redis process
// management, the TCP proxy and the invariant checker) compile without the
// tag so the package always builds.
//
// Stability: internal to weir's own tests. Nothing here is an API; it
// changes with the tests, in any release.
package faults
