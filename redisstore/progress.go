package redisstore

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"

	"github.com/weirflow/weir/engine"
)

// Progress implements engine.Store: progress.lua, the input checked here
// first (engine.ValidateProgress).
func (pt *part) Progress(ctx context.Context, p engine.ProgressParams) error {
	if err := engine.ValidateProgress(p, pt.cfg.Limits); err != nil {
		return err
	}
	if !validJobID(p.JobID) {
		return fmt.Errorf("%w: job %q is not leased with token %q", weir.ErrLeaseLost, p.JobID, p.Token)
	}
	hasReport, pct, msg := "", "", ""
	if r := p.Report; r != nil {
		hasReport, pct, msg = "1", strconv.FormatFloat(r.Percent, 'g', -1, 64), r.Message
		if len(msg) > pt.cfg.Limits.MaxError {
			msg = msg[:pt.cfg.Limits.MaxError]
		}
	}
	hasCk := ""
	if p.Checkpoint != nil {
		hasCk = "1"
	}
	_, err := pt.run(ctx, "progress", p.JobID, p.Token, hasReport, pct, msg, hasCk, p.Checkpoint)
	return err
}

// parseProgress reads a stored progress, "<percent> <at ms> <message>"
// (checkpoint.lua); nil for "" (none).
func parseProgress(s string) *weir.Progress {
	if s == "" {
		return nil
	}
	f := strings.SplitN(s, " ", 3)
	if len(f) != 3 {
		return nil
	}
	pct, err1 := strconv.ParseFloat(f[0], 64)
	at, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return nil
	}
	return &weir.Progress{Percent: pct, Message: f[2], At: toTime(at)}
}
