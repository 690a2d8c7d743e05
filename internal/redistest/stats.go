package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// CommandStat is one command's calls and server time (µs) in INFO
// commandstats.
type CommandStat struct {
	Calls int64
	Usec  float64
}

// Stats is INFO commandstats by command name ("evalsha",
// "config|resetstat"), the commands run inside Lua included.
type Stats map[string]CommandStat

// ScriptCommands are the commands a transition call is.
var ScriptCommands = []string{"fcall", "fcall_ro", "evalsha", "eval"}

// CommandStats reads the server's INFO commandstats (empty on miniredis).
func CommandStats(t testing.TB, rdb redis.Cmdable) Stats {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	st := Stats{}
	for _, line := range strings.Split(info, "\n") {
		head, rest, _ := strings.Cut(strings.TrimSpace(line), ":")
		name, ok := strings.CutPrefix(head, "cmdstat_")
		if !ok {
			continue
		}
		var s CommandStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				s.Calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				s.Usec, _ = strconv.ParseFloat(v, 64)
			}
		}
		st[name] = s
	}
	return st
}

// Measured returns the stats without the measurement's own commands (INFO
// and CONFIG).
func (st Stats) Measured() Stats {
	out := Stats{}
	for name, s := range st {
		if name != "info" && !strings.HasPrefix(name, "config") {
			out[name] = s
		}
	}
	return out
}

// Calls sums the calls of every command of st.
func (st Stats) Calls() int64 {
	var n int64
	for _, s := range st {
		n += s.Calls
	}
	return n
}

// Sum returns the calls and server time of the commands named.
func (st Stats) Sum(names ...string) (calls int64, usec float64) {
	for _, name := range names {
		calls += st[name].Calls
		usec += st[name].Usec
	}
	return calls, usec
}
