// Package weir holds the types that users of weir see: snapshots of jobs,
// workflows and tasks, their states and reasons, queue counts, the store's
// limits and every error weir returns, in one place.
//
// Packages client and worker take and return these types; a program that
// enqueues jobs, submits workflows or runs handlers needs only client,
// worker, a store (engine/memstore, or the Redis store of package redisstore) and
// this package. Package engine, the store contract, uses the same types
// under its own names (weir.Job is weir.Job), so a value passes between
// them unchanged.
//
// This package imports nothing of weir: every other package of the module
// may import it.
//
// Errors are values, tested with errors.Is and errors.As:
//
//	s, err := job.Wait(ctx)
//	switch {
//	case errors.Is(err, weir.ErrNotFound): // no such job, or retention passed
//	case errors.Is(err, weir.ErrFailed): // err is a *weir.JobError with the reason
//	}
package weir
