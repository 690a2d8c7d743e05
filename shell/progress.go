package shell

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/worker"
)

// progressPoll is how often a running command's progress and checkpoint
// files are read.
const progressPoll = time.Second

// reporter passes a command's progress and checkpoint files
// (WEIR_PROGRESS, WEIR_CHECKPOINT) on to the store: read every
// progressPoll while the command runs and once more after it exits, and
// reported when they changed.
type reporter struct {
	j                *worker.Job[Payload]
	progPath, ckPath string
	lastProg, lastCk []byte
	hadCk            bool
	stop             chan struct{}
	done             chan struct{}
}

// newReporter writes the job's last checkpoint into dir/checkpoint (when
// it has one) and returns the reporter of dir's files.
func newReporter(j *worker.Job[Payload], dir string) (*reporter, error) {
	r := &reporter{j: j, progPath: filepath.Join(dir, "progress"), ckPath: filepath.Join(dir, "checkpoint")}
	if ck := j.LastCheckpoint(); ck != nil {
		if err := os.WriteFile(r.ckPath, ck, 0o600); err != nil {
			return nil, err
		}
		r.lastCk, r.hadCk = ck, true
	}
	return r, nil
}

// env is the variables that name the files.
func (r *reporter) env() []string {
	return []string{"WEIR_PROGRESS=" + r.progPath, "WEIR_CHECKPOINT=" + r.ckPath}
}

// start polls until finish.
func (r *reporter) start(ctx context.Context) {
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTicker(progressPoll)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				r.poll(ctx)
			}
		}
	}()
}

// finish stops polling and reads the files once more, so that what the
// command wrote last is stored before the attempt's outcome.
func (r *reporter) finish(ctx context.Context) {
	close(r.stop)
	<-r.done
	// also after a kill (a shutdown, a timeout): the checkpoint is what the
	// next attempt resumes from
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishGrace)
	defer cancel()
	r.poll(fctx)
}

// finishGrace bounds the last report of an attempt.
const finishGrace = 5 * time.Second

// poll reports what changed. Errors are dropped: a lost lease ends the
// attempt anyway, and a checkpoint over the store's limit or a progress
// line that does not parse is not stored.
func (r *reporter) poll(ctx context.Context) {
	if b, err := os.ReadFile(r.progPath); err == nil && !bytes.Equal(b, r.lastProg) {
		r.lastProg = b
		if pct, msg, ok := parseProgressLine(b); ok {
			_ = r.j.Progress(ctx, pct, msg)
		}
	}
	b, err := os.ReadFile(r.ckPath)
	switch {
	case err == nil && (!r.hadCk || !bytes.Equal(b, r.lastCk)):
		if r.j.Checkpoint(ctx, b) == nil {
			r.lastCk, r.hadCk = b, len(b) > 0
		}
	case os.IsNotExist(err) && r.hadCk:
		// removed by the command: no checkpoint any more
		if r.j.Checkpoint(ctx, []byte{}) == nil {
			r.lastCk, r.hadCk = nil, false
		}
	}
}

// parseProgressLine reads a progress file: its first line, "<percent>
// [message]".
func parseProgressLine(b []byte) (float64, string, bool) {
	line, _, _ := strings.Cut(string(b), "\n")
	f, msg, _ := strings.Cut(strings.TrimSpace(line), " ")
	pct, err := strconv.ParseFloat(f, 64)
	if err != nil || pct < 0 || pct > 100 {
		return 0, "", false
	}
	return pct, strings.TrimSpace(msg), true
}
