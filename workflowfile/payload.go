package workflowfile

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
	"go.yaml.in/yaml/v3"
)

// The payload of a task (or of a plain job) for a Go handler: any JSON
// value, written in the file, turned into the msgpack that package client
// would have stored for the same value (spec/workflow-file.md, "Payloads
// for Go handlers"). A handler declared with
// client.NewQueue[P, R] decodes it into its P as if a Go producer had
// enqueued it:
//
//   - objects are msgpack maps with their keys sorted (so that the same
//     object, written with its keys in any order, is the same payload, and
//     an idempotent enqueue or submit repeated by another producer matches);
//     struct fields are matched by their `msgpack` or `json` tag, else
//     their name, exactly;
//   - a number with an integral value that fits an int64 (or uint64) is a
//     msgpack integer (1, 1.0 and 1e3 alike: JSON does not tell them
//     apart), which an integer or a float field takes; any other number is
//     a float64;
//   - strings, true, false, null and arrays are themselves.
//
// Two Go field types take what msgpack calls another type than JSON gives
// them: a time.Time field wants msgpack's timestamp (declare the field a
// string, or give the time as Unix seconds to an int64 field), and a
// float32 field takes only integral numbers (declare it float64).

// maxPayloadDepth bounds the nesting of a payload (as for msgpack's own
// decoder, deeper values are refused).
const maxPayloadDepth = 64

// payloadValue is a decoded payload: its msgpack encoding, and whether it
// is an object with a "run" key, the field a shell task's payload
// (shell.Payload) is run from.
type payloadValue struct {
	msgpack []byte
	hasRun  bool
}

// payload turns the value n into msgpack. It stops, with an error, as soon
// as the payload is over d.maxPayload bytes or the file's payloads over
// MaxCommands.
func (d *fileDecoder) payload(w where, n *yaml.Node) (payloadValue, error) {
	pw := &payloadWriter{max: min(d.maxPayload, MaxCommands-d.payloadBytes)}
	pw.enc = msgpack.NewEncoder(&pw.buf)
	var pv payloadValue
	if err := d.encodeValue(w, n, pw, 0, &pv.hasRun); err != nil {
		return payloadValue{}, err
	}
	pv.msgpack = bytes.Clone(pw.buf.Bytes())
	d.payloadBytes += len(pv.msgpack)
	return pv, nil
}

// payloadWriter is the encoder of one payload and the bytes it may write.
type payloadWriter struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
	max int
}

// check fails once the payload is over its bound.
func (d *fileDecoder) checkSize(w where, n *yaml.Node, pw *payloadWriter) error {
	if pw.buf.Len() <= pw.max {
		return nil
	}
	if pw.max < d.maxPayload {
		return d.fail(w, n, "the payloads total more than %d bytes as msgpack (the limit of one workflow, YAML aliases expanded)", MaxCommands)
	}
	return d.fail(w, n, "the payload is over the limit of %d bytes as msgpack", d.maxPayload)
}

// encodeValue writes n to enc; at depth 0, it sets *hasRun when n is an
// object with a "run" key.
func (d *fileDecoder) encodeValue(w where, n *yaml.Node, pw *payloadWriter, depth int, hasRun *bool) error {
	if err := d.writeValue(w, n, pw, depth, hasRun); err != nil {
		return err
	}
	return d.checkSize(w, n, pw)
}

func (d *fileDecoder) writeValue(w where, n *yaml.Node, pw *payloadWriter, depth int, hasRun *bool) error {
	enc := pw.enc
	if depth > maxPayloadDepth {
		return d.fail(w, n, "the payload is nested more than %d deep", maxPayloadDepth)
	}
	n, err := d.visit(w, n)
	if err != nil {
		return err
	}
	switch n.Kind {
	case yaml.MappingNode:
		fields, err := d.mapping(w, n, "payload")
		if err != nil {
			return err
		}
		type kv struct {
			key string
			v   *yaml.Node
		}
		kvs := make([]kv, 0, len(fields)/2)
		for i := 0; i+1 < len(fields); i += 2 {
			kvs = append(kvs, kv{fields[i].Value, fields[i+1]})
		}
		slices.SortFunc(kvs, func(a, b kv) int { return strings.Compare(a.key, b.key) })
		if err := enc.EncodeMapLen(len(kvs)); err != nil {
			return d.fail(w, n, "%v", err)
		}
		for _, e := range kvs {
			if depth == 0 && e.key == "run" {
				*hasRun = true
			}
			if err := enc.EncodeString(e.key); err != nil {
				return d.fail(w, n, "%v", err)
			}
			if err := d.encodeValue(w.in(e.key), e.v, pw, depth+1, hasRun); err != nil {
				return err
			}
		}
		return nil
	case yaml.SequenceNode:
		if err := enc.EncodeArrayLen(len(n.Content)); err != nil {
			return d.fail(w, n, "%v", err)
		}
		for i, e := range n.Content {
			if err := d.encodeValue(w.at(i), e, pw, depth+1, hasRun); err != nil {
				return err
			}
		}
		return nil
	case yaml.ScalarNode:
	default:
		return d.fail(w, n, "%s is not a JSON value", d.describe(n))
	}
	switch n.ShortTag() {
	case "!!null":
		return enc.EncodeNil()
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return d.fail(w, n, "%s is not true or false", d.describe(n))
		}
		return enc.EncodeBool(b)
	case "!!int", "!!float":
		return d.encodeNumber(w, n, enc)
	case "!!str", "!!timestamp":
		// A YAML timestamp stays the text it was written as (RFC 3339
		// decodes into a time.Time field).
		return enc.EncodeString(n.Value)
	}
	return d.fail(w, n, "the tag %s is not supported in a payload", n.Tag)
}

// encodeNumber writes an integral number as an integer, any other as a
// float64.
func (d *fileDecoder) encodeNumber(w where, n *yaml.Node, enc *msgpack.Encoder) error {
	if d.json || n.ShortTag() == "!!int" {
		// JSON's integers, and YAML's in decimal, parse exactly.
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return enc.EncodeInt(i)
		}
		if u, err := strconv.ParseUint(n.Value, 10, 64); err == nil {
			return enc.EncodeUint(u)
		}
	}
	var f float64
	var err error
	if d.json {
		f, err = strconv.ParseFloat(n.Value, 64)
	} else {
		err = n.Decode(&f) // YAML's forms: 0x1f, 1_000, .inf
	}
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return d.fail(w, n, "%s is not a finite number", d.describe(n))
	}
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return enc.EncodeInt(int64(f))
	}
	if f == math.Trunc(f) && f >= 0 && f < 1<<64 {
		return enc.EncodeUint(uint64(f))
	}
	return enc.EncodeFloat64(f)
}
