package redisstore

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// depsPage is how many dependencies one HMGET of readDeps reads (three
// fields each).
const depsPage = 300

// readDeps fills in the dependency outcomes a claim left out (a task with
// more than DEPS_INLINE dependencies, lua/include/lease.lua): the
// dependencies of a claimed task have all ended, so reading them after the
// call, in pages of bounded commands, gives what the call would have
// returned. One round trip for all of them.
func (pt *part) readDeps(ctx context.Context, claimed []engine.Claimed, lazy []lazyDeps) error {
	if len(lazy) == 0 {
		return nil
	}
	type read struct {
		c     *engine.Claimed
		idx   []int
		st    *redis.StringCmd
		pages []*redis.SliceCmd
	}
	reads := make([]read, 0, len(lazy))
	pipe := pt.rdb.Pipeline()
	for _, l := range lazy {
		if l.at >= len(claimed) {
			return fmt.Errorf("%w: dependencies of claimed job %d of %d", weir.ErrProtocol, l.at, len(claimed))
		}
		c := &claimed[l.at]
		rd := read{c: c}
		for _, f := range strings.Split(l.dp, ",") {
			i, err := strconv.Atoi(f)
			if err != nil || i < 1 {
				return fmt.Errorf("%w: dependency list %q", weir.ErrProtocol, l.dp)
			}
			rd.idx = append(rd.idx, i)
		}
		key := pt.keys.workflow(c.Job.Workflow)
		rd.st = pipe.Get(ctx, pt.keys.taskStates(c.Job.Workflow))
		for first := 0; first < len(rd.idx); first += depsPage {
			fields := make([]string, 0, 3*depsPage)
			for _, i := range rd.idx[first:min(first+depsPage, len(rd.idx))] {
				t := "t" + strconv.Itoa(i)
				fields = append(fields, t, t+".r", t+".e")
			}
			rd.pages = append(rd.pages, pipe.HMGet(ctx, key, fields...))
		}
		reads = append(reads, rd)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return mapErr(err)
	}
	for _, rd := range reads {
		states := rd.st.Val()
		rd.c.Deps = make([]weir.DepOutcome, 0, len(rd.idx))
		for p, page := range rd.pages {
			v := page.Val()
			for k := 0; k < len(v); k += 3 {
				i := rd.idx[p*depsPage+k/3]
				spec, _ := v[k].(string)
				if spec == "" || i > len(states) {
					return fmt.Errorf("%w: dependency %d of %s is not in its workflow", weir.ErrProtocol, i, rd.c.Job.ID)
				}
				name, _, _ := strings.Cut(spec, "|")
				d := weir.DepOutcome{Task: name, State: taskState(states[i-1])}
				if r, ok := v[k+1].(string); ok {
					d.Result = []byte(r)
				}
				d.Error, _ = v[k+2].(string)
				switch states[i-1] {
				case 'W':
					d.Error = weir.ReasonTextWorkflowCancelled
				case 'D':
					d.Error = weir.ReasonTextDeadline
				}
				rd.c.Deps = append(rd.c.Deps, d)
			}
		}
	}
	return nil
}
