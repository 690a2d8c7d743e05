// Package engine is weir's reference: the pure, deterministic state machine
// that defines what every transition of a workflow or job does, and the
// Store contract that every store (the in-process one, the Redis one in
// package redisstore, any other) implements.
//
// The Model has no I/O, no clock and no randomness: time is an argument of
// every transition, lease tokens and queue order come from counters, and
// every list it returns is in plan order or in a documented sort order. The
// same calls give the same results, which is what lets golden scenario files
// (spec/testdata) and the conformance suite compare any store against it.
//
// A Model is one partition. A namespace of P > 1 partitions
// (spec/partitions.md) is a Partitioned: P Models and the routing of every
// call to them, nothing else. Both are a Namespace, which NewNamespace
// makes for any partition count; memstore and the conformance suite hold
// one.
//
// The types users see (snapshots, states, limits, errors) are declared in
// package weir, the module's root, and only there: the Store contract names
// them as weir.Job, weir.ErrNotFound and so on, so the contract and the
// client API share one set of types and values under one name each.
//
// Stability: implement a store against package conformance, not against
// this package's Go API. The Store contract and the Model are the protocol level of weir.
// They follow the protocol version in spec/README.md, not Go semver; until
// protocol 2 is declared stable they may change between minor releases. Most
// programs use packages client and worker instead.
package engine
