package redisstore

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"strings"

	"github.com/weirflow/weir/engine"
)

// DeleteJob implements engine.Store.
func (pt *part) DeleteJob(ctx context.Context, id string) error {
	if strings.Contains(id, "/") {
		return invalid("id", "job %q is a workflow's: delete its workflow", id)
	}
	if !validJobID(id) {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%w: job %q", weir.ErrNotFound, id)
	}
	_, err := pt.run(ctx, "delete_job", id)
	return err
}

// DeleteWorkflow implements engine.Store.
func (pt *part) DeleteWorkflow(ctx context.Context, id string) error {
	if !engine.ValidID(id) {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%w: workflow %q", weir.ErrNotFound, id)
	}
	_, err := pt.run(ctx, "delete_workflow", id)
	return err
}
