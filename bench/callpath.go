package bench

// The paths a store's server-side code can take (Report.CallPath).
const (
	// CallPathFunctions is FCALL of a Redis Functions library (Redis 7.0+).
	CallPathFunctions = "functions"
	// CallPathScripts is EVALSHA, and EVAL after NOSCRIPT.
	CallPathScripts = "scripts"
)

// callPather is a store that says which path its calls take: redisstore.Store
// runs its Lua as a Redis Functions library through FCALL where the server
// has Functions and as scripts through EVALSHA elsewhere, choosing on first
// use. A store without it runs scripts.
type callPather interface{ CallPath() string }

// callPath returns the path of store: its CallPath when it has one (ask
// after the run: the path is chosen on first use), else CallPathScripts.
func callPath(store any) string {
	if p, ok := store.(callPather); ok {
		if v := p.CallPath(); v != "" {
			return v
		}
	}
	return CallPathScripts
}
