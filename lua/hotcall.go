package lua

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// Boxed constants of the hot path: converting a non-empty string to an
// interface allocates, these are converted once.
var (
	argOne   any = "1"
	argEmpty any = ""
)

// flagArg is flag(b), boxed.
func flagArg(b bool) any {
	if b {
		return argOne
	}
	return argEmpty
}

// scriptSHA holds each script's SHA1, boxed, by name.
var scriptSHA = func() map[string]any {
	out := make(map[string]any, len(scripts))
	for name, sc := range scripts {
		out[name] = sc.rs.Hash()
	}
	return out
}()

// argv starts the command of a call of the script name, with room for n
// script arguments: EVALSHA, its SHA, the common KEYS and the common ARGV
// (now, retention, max backoff), all but "now" boxed beforehand.
func (s *Store) argv(name string, n int) []any {
	argv := make([]any, 0, 3+len(s.keyArgs)+1+len(s.limitArgs)+n)
	argv = append(argv, "evalsha", scriptSHA[name], len(s.keyArgs))
	argv = append(argv, s.keyArgs...)
	if s.clock != nil {
		argv = append(argv, strconv.FormatInt(s.clock().UnixMilli(), 10))
	} else {
		argv = append(argv, argEmpty)
	}
	return append(argv, s.limitArgs...)
}

// runFlat runs the call argv (from s.argv) of the script name, whose reply
// is a flat array, and returns the reply's values as strings, decoded
// straight from the connection (integers in decimal, nil as ""): the same
// values newReader reads from run's reply, without boxing each one. Like
// go-redis's Script.Run it falls back to EVAL when the server does not
// have the script cached (NOSCRIPT).
func (s *Store) runFlat(ctx context.Context, name string, argv []any) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := redis.NewStringSliceCmd(ctx, argv...)
	err := s.rdb.Process(ctx, cmd)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		argv[0], argv[1] = "eval", scripts[name].src
		cmd = redis.NewStringSliceCmd(ctx, argv...)
		err = s.rdb.Process(ctx, cmd)
	}
	if err != nil {
		return nil, mapErr(err)
	}
	return cmd.Val(), nil
}

// bytesArg is b as an argument: a nil or empty b is sent as the empty
// string (the same bytes on the wire) without boxing.
func bytesArg(b []byte) any {
	if len(b) == 0 {
		return argEmpty
	}
	return b
}

var (
	argCompleted any = string(engine.OutcomeCompleted)
	argFailed    any = string(engine.OutcomeFailed)
	argCancelled any = string(engine.OutcomeCancelled)
	argReleased  any = string(engine.OutcomeReleased)
)

// kindArg is string(k), boxed once per kind.
func kindArg(k engine.OutcomeKind) any {
	switch k {
	case engine.OutcomeCompleted:
		return argCompleted
	case engine.OutcomeFailed:
		return argFailed
	case engine.OutcomeCancelled:
		return argCancelled
	case engine.OutcomeReleased:
		return argReleased
	}
	return string(k)
}
