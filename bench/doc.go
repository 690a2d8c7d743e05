// Package bench measures weir on one Redis: the scenarios of `weir bench`
// (plain jobs at several concurrencies and worker processes, a chain of
// workflow tasks, fan-in workflows, one large submit), each with Redis
// commands and client round trips per job and Redis memory per retained
// record, next to a ceiling measured in the same run with the same client:
// parallel EVALSHA calls of a trivial three-write script.
//
// Run runs the scenarios against the Redis of Options.RedisURL, or against
// an embedded miniredis started in this process when the URL is empty (the
// Report says which: miniredis has neither memory figures nor script
// timings, and its speed says nothing about Redis). Every run works in a
// namespace of its own, bench-<random>, deleted at the end.
//
// Extra worker processes are started through Options.WorkerCommand; the
// started program must call RunWorkerProcess (the weir CLI does so in its
// hidden bench-worker subcommand).
//
// Stability: internal to `weir bench` and its tests; its API may change in
// any release (what a run reports is described in docs/benchmarks.md).
package bench
