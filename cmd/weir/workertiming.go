package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/command"
)

// Defaults of weir worker's --lease and --grace.
const (
	defaultLease = 30 * time.Second
	defaultGrace = shutdownTimeout
)

// workerTiming is weir worker's lease (worker.Config.Lease: how long a
// claimed job stays leased without a heartbeat, so how soon another worker
// runs the jobs of one that died) and its grace (how long running commands
// get to finish after SIGINT or SIGTERM before they are killed and their
// jobs handed back).
type workerTiming struct {
	lease, grace time.Duration
}

// resolve reads the timing of --lease and --grace, else WEIR_LEASE and
// WEIR_GRACE, else the defaults, and checks it: the lease in whole
// milliseconds within [1ms, maxLease] (what the store accepts), the grace
// not negative (0: running commands are killed at once).
func (wt *workerTiming) resolve(c *cobra.Command, maxLease time.Duration) error {
	lease, src, err := durationSetting(c, "lease", "WEIR_LEASE", wt.lease)
	if err != nil {
		return err
	}
	if lease < time.Millisecond || lease > maxLease || lease%time.Millisecond != 0 {
		return command.Usage(fmt.Errorf("%s %v: want whole milliseconds in [1ms, %v] (how long a claimed job stays leased without a heartbeat; default %v)", src, lease, maxLease, defaultLease))
	}
	grace, src, err := durationSetting(c, "grace", "WEIR_GRACE", wt.grace)
	if err != nil {
		return err
	}
	if grace < 0 {
		return command.Usage(fmt.Errorf("%s %v: want 0 or more (how long running commands get to finish after SIGTERM; 0: killed at once; default %v)", src, grace, defaultGrace))
	}
	wt.lease, wt.grace = lease, grace
	return nil
}

// durationSetting returns the duration of flag --name when given, else of
// the environment variable env when set and not empty, else v (the flag's
// default), with where it came from ("--name" or env) for errors.
func durationSetting(c *cobra.Command, name, env string, v time.Duration) (time.Duration, string, error) {
	if c.Flags().Changed(name) {
		return v, "--" + name, nil
	}
	s := os.Getenv(env)
	if s == "" {
		return v, "--" + name, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, env, command.Usage(fmt.Errorf("%s %q: not a duration (write it like 30s, 2m or 1h30m)", env, s))
	}
	return d, env, nil
}
