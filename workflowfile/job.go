package workflowfile

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
)

// Job is a parsed and checked job document (spec/rest.md, "Enqueueing a
// job"): one plain job, for a Go handler, as the REST API's POST /v1/jobs
// takes it.
type Job struct {
	// Spec is the job to enqueue: its ID is the document's, or a new one
	// (client.NewID) when it has none; its payload the document's payload
	// as msgpack (null when it has none); RunAt, Delay, Unique and Key
	// the document's run_at, delay, unique and key.
	Spec engine.JobSpec
	// Shell is "payload" when the payload is an object with a "run" key,
	// the field a shell worker runs as a command (shell.Payload); else "".
	Shell string
}

// fileJob is the job document as decoded.
type fileJob struct {
	ID       string
	Queue    string
	Payload  *payloadValue
	Priority int
	fileRetry
	Delay  string
	RunAt  string
	Unique *fileUnique
	// Key is the job's concurrency key ("": none).
	Key string
}

// fileUnique is a job document's unique object.
type fileUnique struct {
	Key string
	For string
}

// ParseJob strictly decodes data, a job document named name (errors start
// with it), and checks it into a job spec as Parse does a workflow file:
// every problem is an *Error naming the field; a nil error means the spec
// passes engine.ValidateJob with o's limits. o.Dir is not used.
func ParseJob(name string, data []byte, o Options) (*Job, error) {
	limits, format := o.Limits, o.Format
	if limits == (weir.Limits{}) {
		limits = weir.DefaultLimits()
	}
	if format == FormatAuto {
		format = formatOf(name, data)
	}
	d := &fileDecoder{path: name, json: format == FormatJSON, budget: fileNodes(limits), maxPayload: limits.MaxPayload}
	root, err := d.root(data)
	if err != nil {
		return nil, err
	}
	f, err := d.job(root)
	if err != nil {
		return nil, err
	}
	fail := func(field, format string, args ...any) error {
		return taskError(name, "", "", field, fmt.Sprintf(format, args...))
	}
	j := &Job{Spec: engine.JobSpec{ID: f.ID, Queue: f.Queue, Priority: f.Priority}}
	switch {
	case j.Spec.ID == "":
		j.Spec.ID = client.NewID()
	case !engine.ValidID(j.Spec.ID):
		return nil, fail("id", "job ID %q must "+engine.IDRule, j.Spec.ID)
	}
	switch {
	case f.Queue == "":
		return nil, fail("queue", "required: the queue whose Go handler runs the job")
	case !engine.ValidName(f.Queue):
		return nil, fail("queue", "queue name %q must "+engine.NameRule, f.Queue)
	}
	j.Spec.Payload = []byte{0xc0} // msgpack nil: what client encodes for a nil payload
	if f.Payload != nil {
		j.Spec.Payload = f.Payload.msgpack
		if f.Payload.hasRun {
			j.Shell = "payload"
		}
	}
	if len(j.Spec.Payload) > limits.MaxPayload {
		return nil, fail("payload", "the payload is %d bytes as msgpack, over the limit of %d", len(j.Spec.Payload), limits.MaxPayload)
	}
	rp, rf, err := f.resolve(limits)
	if err != nil {
		return nil, fail(rf, "%v", err)
	}
	j.Spec.MaxAttempts, j.Spec.MaxExpiries, j.Spec.Backoff, j.Spec.Timeout = rp.maxAttempts, rp.maxExpiries, rp.backoff, rp.timeout
	if j.Spec.Delay, err = parseDuration(f.Delay, 0); err != nil {
		return nil, fail("delay", "%v", err)
	}
	if u := f.Unique; u != nil {
		j.Spec.Unique = &engine.Unique{Key: u.Key}
		if j.Spec.Unique.For, err = parseDuration(u.For, 0); err != nil {
			return nil, fail("unique.for", "%v", err)
		}
	}
	if f.Key != "" && !engine.ValidName(f.Key) {
		return nil, fail("key", "concurrency key %q must "+engine.NameRule, f.Key)
	}
	j.Spec.Key = f.Key
	if f.RunAt != "" {
		if f.Delay != "" {
			return nil, fail("run_at", "give delay or run_at, not both")
		}
		t, err := time.Parse(time.RFC3339Nano, f.RunAt)
		if err != nil {
			return nil, fail("run_at", "%q is not an RFC 3339 time (example: 2026-12-04T17:00:00Z)", f.RunAt)
		}
		j.Spec.RunAt = t
	}
	if err := engine.ValidateJob(j.Spec, limits); err != nil {
		var ve *weir.ValidationError
		if errors.As(err, &ve) {
			return nil, fail(ve.Field, "%s", ve.Problem)
		}
		return nil, &Error{File: name, Problem: err.Error()}
	}
	return j, nil
}

// root parses data into the node of its one value.
func (d *fileDecoder) root(data []byte) (*yaml.Node, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{File: d.path, Problem: "the document is empty"}
	}
	if d.json {
		n, err := jsonNodes(data)
		if err != nil {
			return nil, &Error{File: d.path, Problem: "invalid JSON: " + err.Error()}
		}
		return n, nil
	}
	n, err := yamlNodes(data)
	if err != nil {
		return nil, &Error{File: d.path, Problem: err.Error()}
	}
	return n, nil
}

func (d *fileDecoder) job(n *yaml.Node) (fileJob, error) {
	var f fileJob
	top := where{}
	fields, err := d.mapping(top, n, "job")
	if err != nil {
		return f, err
	}
	for i := 0; i < len(fields); i += 2 {
		k, v := fields[i], fields[i+1]
		w := top.in(k.Value)
		switch k.Value {
		case "id":
			f.ID, err = d.id(w, v)
		case "queue":
			f.Queue, err = d.str(w, v)
		case "payload":
			var pv payloadValue
			if pv, err = d.payload(w, v); err == nil {
				f.Payload = &pv
			}
		case "priority":
			f.Priority, err = d.int(w, v)
		case "delay":
			f.Delay, err = d.optStr(w, v)
		case "run_at":
			f.RunAt, err = d.optStr(w, v)
		case "unique":
			f.Unique, err = d.unique(w, v)
		case "key":
			f.Key, err = d.optStr(w, v)
		default:
			var ok bool
			if ok, err = d.retryField(w, k.Value, v, &f.fileRetry); !ok {
				err = d.fail(w, k, "unknown field (the fields of a job are listed in spec/rest.md)")
			}
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// unique decodes a job's unique object: {key, for}, both optional.
func (d *fileDecoder) unique(w where, n *yaml.Node) (*fileUnique, error) {
	fields, err := d.mapping(w, n, "unique")
	if err != nil {
		return nil, err
	}
	u := &fileUnique{}
	for i := 0; i < len(fields); i += 2 {
		k, v := fields[i], fields[i+1]
		switch k.Value {
		case "key":
			u.Key, err = d.str(w.in(k.Value), v)
		case "for":
			u.For, err = d.str(w.in(k.Value), v)
		default:
			err = d.fail(w.in(k.Value), k, "unknown field (a job's unique takes key and for)")
		}
		if err != nil {
			return nil, err
		}
	}
	return u, nil
}
