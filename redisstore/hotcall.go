package redisstore

import "github.com/weirflow/weir/engine"

// Boxed constants of the hot path: converting a non-empty string to an
// interface allocates, these are converted once.
var (
	argOne   any = "1"
	argEmpty any = ""
)

// flag is a boolean argument of a script: "1" or "".
func flag(b bool) string {
	if b {
		return "1"
	}
	return ""
}

// flagArg is flag(b), boxed.
func flagArg(b bool) any {
	if b {
		return argOne
	}
	return argEmpty
}

// bytesArg is b as an argument: a nil or empty b is sent as the empty
// string, and a one-byte b (a msgpack nil, empty map or small integer: a
// handler's result of no value) as a boxed one-byte string, the same bytes
// on the wire, without boxing.
func bytesArg(b []byte) any {
	switch len(b) {
	case 0:
		return argEmpty
	case 1:
		return argByte[b[0]]
	}
	return b
}

// argByte boxes every one-byte string once.
var argByte = func() (out [256]any) {
	for i := range out {
		out[i] = string([]byte{byte(i)})
	}
	return out
}()

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
