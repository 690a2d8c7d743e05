package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// CallPath says how a Store runs its transitions on the server.
type CallPath int32

const (
	// PathAuto: functions where the server has them, else scripts. The
	// store decides on its first call and keeps to it.
	PathAuto CallPath = iota
	// PathFunctions: the function library, loaded once per server
	// (FUNCTION LOAD) and called with FCALL; its setup runs at load, not
	// per call.
	PathFunctions
	// PathScripts: each transition as a script, with EVALSHA (EVAL when
	// the server does not have it cached). miniredis and servers before
	// Redis 7 have only this path.
	PathScripts
)

func (p CallPath) String() string {
	switch p {
	case PathFunctions:
		return "functions"
	case PathScripts:
		return "scripts"
	}
	return "auto"
}

// CallPath returns the path the store uses: "functions" or "scripts" once
// it made a call, "auto" before.
func (pt *part) CallPath() string { return CallPath(pt.path.Load()).String() }

// argv starts the command of a call of script sc, with room for n more
// arguments: two slots for the verb and the function or SHA (call fills
// them), one key (the partition prefix), and the common ARGV (now,
// retention, largest backoff).
func (pt *part) argv(sc *script, n int) []any {
	argv := make([]any, 0, 7+n)
	argv = append(argv, nil, nil, argOne, pt.prefixArg)
	if pt.clock != nil {
		argv = append(argv, strconv.FormatInt(pt.clock().UnixMilli(), 10))
	} else {
		argv = append(argv, argEmpty)
	}
	return append(argv, pt.limitArgs...)
}

// run calls script name with args after the common ones.
func (pt *part) run(ctx context.Context, name string, args ...any) ([]string, error) {
	sc := scripts[name]
	return pt.call(ctx, sc, append(pt.argv(sc, len(args)), args...))
}

// call runs one call of script sc (argv from s.argv) and returns its flat
// reply, the values decoded straight from the connection as strings
// (integers in decimal, nil as "").
func (pt *part) call(ctx context.Context, sc *script, argv []any) ([]string, error) {
	r := pt.callMany(ctx, sc, [][]any{argv})
	return r[0].v, r[0].err
}

// callResult is one call's reply or error.
type callResult struct {
	v   []string
	err error
}

// callMany runs calls of sc (several at once in one pipeline) and returns
// each one's result, in order. It is the one way every script reaches the
// server (run, call, EnqueueBatch and the drains all come here): on the
// functions path a "function not found" (a restarted or flushed server, a
// failover to one that never had the library) loads the library and runs
// those calls again; a server without FCALL moves the store to the scripts
// path (unless Options.Path fixed the path); on the scripts path a
// NOSCRIPT runs the call again with EVAL; a call refused with PENDING
// (drain.go) runs again once the kept cascade is drained. None of these
// reaches the caller.
func (pt *part) callMany(ctx context.Context, sc *script, argvs [][]any) []callResult {
	out := make([]callResult, len(argvs))
	if err := ctx.Err(); err != nil {
		for i := range out {
			out[i].err = err
		}
		return out
	}
	pending := make([]int, len(argvs))
	for i := range pending {
		pending[i] = i
	}
	evalSrc := false
	rounds := 0 // PENDING refusals answered (drain.go)
	for attempt := 0; len(pending) > 0; attempt++ {
		path := CallPath(pt.path.Load())
		cmds := make([]*redis.StringSliceCmd, len(pending))
		for k, i := range pending {
			a := argvs[i]
			switch {
			case path == PathScripts && evalSrc:
				a[0], a[1] = sc.eval, sc.text().src
			case path == PathScripts:
				a[0], a[1] = sc.evalsha, sc.text().sha
			default:
				a[0], a[1] = sc.fcall, sc.fn
			}
			cmds[k] = redis.NewStringSliceCmd(ctx, a...)
			cmds[k].SetFirstKeyPos(3)
		}
		// a write call of a durable store waits for its replicas on the
		// same connection (one pipeline)
		var wait *redis.IntCmd
		if pt.durable.Replicas > 0 && !sc.def.readOnly {
			wait = pt.durable.waitCmd(ctx)
		}
		if len(cmds) == 1 && wait == nil {
			_ = pt.rdb.Process(ctx, cmds[0])
		} else {
			pipe := pt.rdb.Pipeline()
			for _, c := range cmds {
				_ = pipe.Process(ctx, c)
			}
			if wait != nil {
				_ = pipe.Process(ctx, wait)
			}
			_, _ = pipe.Exec(ctx) // each command's error is read below
		}
		var notReplicated error
		if wait != nil {
			notReplicated = pt.durable.replicated(wait)
		}
		var again []int
		var first error
		refused := false
		for k, i := range pending {
			err := cmds[k].Err()
			if err == nil && notReplicated != nil {
				out[i].err = notReplicated
				continue
			}
			if isPending(err) && rounds < maxPendingRounds {
				again = append(again, i)
				refused = true
				continue
			}
			if err == nil {
				out[i].v = cmds[k].Val()
				if path == PathAuto {
					pt.path.CompareAndSwap(int32(PathAuto), int32(PathFunctions))
				}
				continue
			}
			if attempt < 3 && pt.recoverable(path, err) {
				again = append(again, i)
				if first == nil {
					first = err
				}
				continue
			}
			out[i].err = pt.explain(ctx, err, mapErr(err))
		}
		if len(again) == 0 {
			break
		}
		if refused {
			// a cascade left by an earlier call: finish it, then send again
			rounds++
			attempt--
			if err := pt.drain(ctx, nil); err != nil {
				for _, i := range again {
					out[i].err = err
				}
				break
			}
		}
		switch {
		case first == nil:
		case path == PathScripts:
			evalSrc = true
		case isUnknownCommand(first):
			pt.path.CompareAndSwap(int32(path), int32(PathScripts))
		default: // function not found
			if err := pt.loadLibrary(ctx); err != nil {
				for _, i := range again {
					out[i].err = err
				}
				again = nil
			}
		}
		pending = again
	}
	return out
}

// recoverable reports whether err on path is one callMany handles by
// itself.
func (pt *part) recoverable(path CallPath, err error) bool {
	if path == PathScripts {
		return redis.HasErrorPrefix(err, "NOSCRIPT")
	}
	return isFunctionNotFound(err) || (isUnknownCommand(err) && !pt.fixedPath)
}

func isFunctionNotFound(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.HasPrefix(rerr.Error(), "ERR Function not found")
}

func isUnknownCommand(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.HasPrefix(strings.ToLower(rerr.Error()), "err unknown command")
}

// loadLibrary loads the function library on the server (on every primary
// of a cluster). A library already there (another process loaded it) is a
// success; a server that has no FUNCTION, or refuses it to this user, moves
// the store to the scripts path.
func (pt *part) loadLibrary(ctx context.Context) error {
	load := func(ctx context.Context, c redis.Cmdable) error {
		err := c.FunctionLoad(ctx, library.src).Err()
		if err != nil && strings.Contains(err.Error(), "already exists") {
			return nil
		}
		return err
	}
	var err error
	if cc, ok := pt.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return load(ctx, c) })
	} else {
		err = load(ctx, pt.rdb)
	}
	if err == nil {
		return nil
	}
	if (isUnknownCommand(err) || redis.HasErrorPrefix(err, "NOPERM")) && !pt.fixedPath {
		pt.path.Store(int32(PathScripts))
		return nil
	}
	return mapErr(err)
}

// Load makes the transitions ready on the server before the first call:
// it loads the function library, or on the scripts path every script
// (SCRIPT LOAD). Calls do this by themselves when needed; Load moves the
// cost out of the first call.
func (pt *part) Load(ctx context.Context) error {
	if CallPath(pt.path.Load()) != PathScripts {
		if err := pt.loadLibrary(ctx); err != nil {
			return err
		}
	}
	if CallPath(pt.path.Load()) == PathScripts {
		for _, d := range scriptDefs {
			if err := pt.rdb.ScriptLoad(ctx, scripts[d.name].text().src).Err(); err != nil {
				return mapErr(err)
			}
		}
		return nil
	}
	pt.path.CompareAndSwap(int32(PathAuto), int32(PathFunctions))
	return nil
}
