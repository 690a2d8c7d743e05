package client

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirflow/weir/engine"
)

// Queue is a typed queue definition: a queue's name with the type of the
// payload its jobs take (P) and of the result they return (R). Declare it
// once and share it between producer and worker code, so that enqueueing the
// wrong payload, handling it with the wrong function or reading a result as
// the wrong type does not compile:
//
//	var Resize = client.NewQueue[ResizeArgs, Image]("resize")
//
// Payloads and results cross the store as msgpack (struct fields use their
// `msgpack` tag, else their `json` tag, else their name). A Queue is a small
// value, safe to copy and to use from many goroutines.
type Queue[P, R any] struct {
	name string
}

// NewQueue returns the queue definition named name. It panics when name is
// not a valid queue name (engine.ValidName), like regexp.MustCompile:
// queue definitions are package-level declarations, so a bad name is a
// programming error found at start-up.
func NewQueue[P, R any](name string) Queue[P, R] {
	if !engine.ValidName(name) {
		panic(fmt.Sprintf("weir: queue name %q must "+engine.NameRule, name))
	}
	return Queue[P, R]{name: name}
}

// Name returns the queue's name.
func (q Queue[P, R]) Name() string { return q.name }

// EncodePayload encodes a payload as it is stored.
func (q Queue[P, R]) EncodePayload(p P) ([]byte, error) { return encode(p) }

// DecodePayload decodes a stored payload.
func (q Queue[P, R]) DecodePayload(b []byte) (P, error) { return decode[P](b) }

// EncodeResult encodes a result as it is stored.
func (q Queue[P, R]) EncodeResult(r R) ([]byte, error) { return encode(r) }

// DecodeResult decodes a stored result.
func (q Queue[P, R]) DecodeResult(b []byte) (R, error) { return decode[R](b) }

// codec is a pooled msgpack encoder and decoder with the buffer and the
// reader they use, so that encoding or decoding a value allocates little
// more than the value's own bytes.
type codec struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
	rd  bytes.Reader
	dec *msgpack.Decoder
}

var codecs = sync.Pool{New: func() any {
	return &codec{enc: msgpack.NewEncoder(nil), dec: msgpack.NewDecoder(nil)}
}}

// maxPooledBuf bounds the buffer a pooled codec keeps.
const maxPooledBuf = 64 << 10

func encode(v any) ([]byte, error) {
	c := codecs.Get().(*codec)
	c.buf.Reset()
	c.enc.Reset(&c.buf)
	c.enc.SetCustomStructTag("json")
	err := c.enc.Encode(v)
	var out []byte
	if err == nil {
		out = bytes.Clone(c.buf.Bytes())
	}
	if c.buf.Cap() <= maxPooledBuf {
		codecs.Put(c)
	}
	if err != nil {
		return nil, fmt.Errorf("weir: encode %T: %w", v, err)
	}
	return out, nil
}

func decode[T any](b []byte) (T, error) {
	var v T
	if len(b) == 0 {
		// Nothing stored (an empty result): the zero value.
		return v, nil
	}
	c := codecs.Get().(*codec)
	c.rd.Reset(b)
	c.dec.Reset(&c.rd)
	c.dec.SetCustomStructTag("json")
	err := c.dec.Decode(&v)
	c.rd.Reset(nil)
	c.dec.Reset(&c.rd)
	codecs.Put(c)
	if err != nil {
		return v, fmt.Errorf("weir: decode %T: %w", v, err)
	}
	return v, nil
}

// Decode decodes a payload or result stored by weir into a T. It is for
// code that has no Queue at hand (tools, dashboards); code that has one
// uses its typed methods.
func Decode[T any](b []byte) (T, error) { return decode[T](b) }
