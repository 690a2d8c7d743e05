package rest

import "github.com/weirflow/weir"

// The API's job and queue objects for other programs: `weir jobs --json`
// and `weir queues --json` print these, so that the CLI and the API show
// the same fields (spec/rest.md, docs/cli.md).

// JobJSON returns j as GET /v1/jobs/{id} answers it (spec/rest.md, job),
// a value for encoding/json: the object each job of `weir jobs --json` is.
func JobJSON(j weir.Job) any { return toJobRec(j) }

// QueueJSON returns q as one queue of GET /v1/queues, a value for
// encoding/json: the object each queue of `weir queues --json` is.
func QueueJSON(q weir.QueueInfo) any { return toQueueRec(q) }
