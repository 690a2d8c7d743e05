package workflowfile

import (
	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// validGroupName reports whether name may name a chain or batch: every
// callback's task name, "<name>.then" to "<name>.finally", is a valid task
// name (^[A-Za-z0-9_.-]{1,56}$), whether or not the group has callbacks, so
// that a name is refused at once rather than when a callback is added.
func validGroupName(name string) bool {
	return name != "" && engine.ValidName(name+"."+weir.GroupFinally)
}
