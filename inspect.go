package weir

// JobList names the jobs of a queue that a job listing pages through: those
// waiting in the queue (ready, delayed), those leased (running), and those
// that ended in it (failed, cancelled, completed), kept listable until their
// retention passed.
type JobList string

// The job lists of a queue.
const (
	// ListReady: queued jobs due now, in claim order.
	ListReady JobList = "ready"
	// ListDelayed: queued jobs waiting for their RunAt, in due order.
	ListDelayed JobList = "delayed"
	// ListRunning: leased jobs, in lease-deadline order.
	ListRunning JobList = "running"
	// ListFailed: the queue's dead letters, jobs that ended failed, newest
	// end first.
	ListFailed JobList = "failed"
	// ListCancelled: jobs that ended cancelled, newest end first. A task
	// that CancelWorkflow ended before it ever ran is not in it (its
	// workflow shows it).
	ListCancelled JobList = "cancelled"
	// ListCompleted: jobs that ended completed, newest end first.
	ListCompleted JobList = "completed"
)

// JobLists are every JobList, in the order above.
var JobLists = []JobList{ListReady, ListDelayed, ListRunning, ListFailed, ListCancelled, ListCompleted}

// Valid reports whether l is one of JobLists.
func (l JobList) Valid() bool {
	for _, x := range JobLists {
		if l == x {
			return true
		}
	}
	return false
}

// ListJobsParams pages through one list of a queue.
type ListJobsParams struct {
	// Queue is the queue's name.
	Queue string
	// State is the list: ready, delayed, running, failed, cancelled or
	// completed.
	State JobList
	// Limit is the page size, 1 to 1000; 0 means 100.
	Limit int
	// Cursor is the previous page's NextCursor; empty for the first page.
	// A cursor belongs to the store (and list) that returned it.
	Cursor string
}

// JobPage is one page of a job listing.
type JobPage struct {
	Jobs []Job
	// NextCursor is empty on the last page.
	NextCursor string
}
