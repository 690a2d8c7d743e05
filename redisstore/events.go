package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

var _ engine.EventReader = (*Store)(nil)

// DefaultEventsMaxLen is the event stream's cap in entries (one entry per
// call that made events) while a namespace has no EventsConfig.
const DefaultEventsMaxLen = 100_000

// EventsConfig is a namespace's event stream setting (spec/events.md): on
// or off, and its cap. It is stored in Redis (the seq hash's ev), so every
// process of the namespace follows it from its next call.
type EventsConfig struct {
	// Off: transitions write no events (and pay nothing for them).
	Off bool
	// MaxLen caps the stream at about this many entries (XADD MAXLEN ~;
	// an entry holds the events of one call); 0 for no length cap.
	MaxLen int64
	// MaxAge removes entries older than this, by the server's clock (XTRIM
	// MINID ~ at each call that writes events); whole milliseconds, 0 for
	// no age cap.
	MaxAge time.Duration
}

func (pt *part) eventsKey() string { return pt.keys.prefix + "events" }

// SetEvents sets the namespace's event stream: EventsConfig{} restores
// the default (on, DefaultEventsMaxLen entries, no age cap). A config
// that is on needs a cap (MaxLen or MaxAge).
func (pt *part) SetEvents(ctx context.Context, c EventsConfig) error {
	if err := c.validate(); err != nil {
		return err
	}
	switch {
	case c == EventsConfig{}:
		return mapErr(pt.rdb.HDel(ctx, pt.keys.seq, "ev").Err())
	case c.Off:
		return mapErr(pt.rdb.HSet(ctx, pt.keys.seq, "ev", "off").Err())
	}
	v := strconv.FormatInt(c.MaxLen, 10) + ":" + strconv.FormatInt(c.MaxAge.Milliseconds(), 10)
	return mapErr(pt.rdb.HSet(ctx, pt.keys.seq, "ev", v).Err())
}

func (c EventsConfig) validate() error {
	if c.MaxLen < 0 || c.MaxAge < 0 || c.MaxAge%time.Millisecond != 0 {
		return fmt.Errorf("%w: events: negative cap or an age that is not whole milliseconds", weir.ErrInvalid)
	}
	return nil
}

// SetEventsOff switches the namespace's events off, or on with the
// default cap (client.EventsSwitch).
func (pt *part) SetEventsOff(ctx context.Context, off bool) error {
	return pt.SetEvents(ctx, EventsConfig{Off: off})
}

// EventsConfig returns the namespace's event stream setting, with the
// default cap filled in when none was set.
func (pt *part) EventsConfig(ctx context.Context) (EventsConfig, error) {
	v, err := pt.rdb.HGet(ctx, pt.keys.seq, "ev").Result()
	if errors.Is(err, redis.Nil) {
		return EventsConfig{MaxLen: DefaultEventsMaxLen}, nil
	}
	if err != nil {
		return EventsConfig{}, mapErr(err)
	}
	if v == "off" {
		return EventsConfig{Off: true}, nil
	}
	a, b, _ := strings.Cut(v, ":")
	n, err1 := strconv.ParseInt(a, 10, 64)
	ms, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		return EventsConfig{}, fmt.Errorf("%w: events setting %q", weir.ErrProtocol, v)
	}
	return EventsConfig{MaxLen: n, MaxAge: time.Duration(ms) * time.Millisecond}, nil
}

// parseCursor splits an event ID "<entry ID>.<n>" (or an entry ID alone,
// every event of which was seen) into the entry and the events of it seen
// (-1: all).
func parseCursor(after string) (entry string, seen int, err error) {
	if after == "" {
		return "", 0, nil
	}
	entry, n, ok := strings.Cut(after, ".")
	seen = -1
	if ok {
		if seen, err = strconv.Atoi(n); err != nil || seen < 1 {
			return "", 0, fmt.Errorf("%w: event cursor %q", weir.ErrInvalid, after)
		}
	}
	ms, sq, ok := strings.Cut(entry, "-")
	if _, err := strconv.ParseUint(ms, 10, 64); err != nil || !ok {
		return "", 0, fmt.Errorf("%w: event cursor %q", weir.ErrInvalid, after)
	}
	if _, err := strconv.ParseUint(sq, 10, 64); err != nil {
		return "", 0, fmt.Errorf("%w: event cursor %q", weir.ErrInvalid, after)
	}
	return entry, seen, nil
}

// Events reads the namespace's event stream (engine.EventReader): XRANGE
// from the cursor's entry, the Workflow filter applied here, in pages
// until Limit events matched or the stream ended; with Wait, an XREAD
// BLOCK when nothing was there.
func (pt *part) Events(ctx context.Context, p engine.EventsParams) (engine.EventPage, error) {
	if err := engine.ValidateEventsParams(p); err != nil {
		return engine.EventPage{}, err
	}
	entry, seen, err := parseCursor(p.After)
	if err != nil {
		return engine.EventPage{}, err
	}
	limit := p.Limit
	if limit == 0 {
		limit = engine.DefaultEventsLimit
	}
	page := engine.EventPage{Next: p.After}
	key := pt.eventsKey()
	for waited := false; ; {
		start := "-"
		if entry != "" {
			start = entry
		}
		msgs, err := pt.rdb.XRangeN(ctx, key, start, "+", int64(limit)+1).Result()
		if err != nil {
			return engine.EventPage{}, mapErr(err)
		}
		read := 0
		for _, m := range msgs {
			skip := 0
			if m.ID == entry {
				if seen < 0 {
					continue
				}
				skip = seen
			}
			read++
			evs, err := decodeEntry(m)
			if err != nil {
				return engine.EventPage{}, err
			}
			for i := skip; i < len(evs); i++ {
				page.Next = evs[i].ID
				if p.Workflow != "" && evs[i].Workflow != p.Workflow {
					continue
				}
				page.Events = append(page.Events, evs[i])
				if len(page.Events) == limit {
					return page, nil
				}
			}
			entry, seen = m.ID, -1
		}
		if read > 0 && len(msgs) > limit {
			continue // more entries: read on
		}
		if len(page.Events) > 0 || p.Wait <= 0 || waited {
			return page, nil
		}
		// nothing yet: block until the stream grows past the cursor's
		// entry (or the oldest possible one)
		waited = true
		last := entry
		if last == "" {
			last = "0-0"
		}
		res, err := pt.waitEvents(ctx, key, last, p.Wait)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return engine.EventPage{}, ctxErr
		}
		if errors.Is(err, redis.Nil) || (err == nil && len(res) == 0) {
			return page, nil
		}
		if err != nil {
			return engine.EventPage{}, mapErr(err)
		}
		if seen >= 0 && entry != "" {
			// the cursor's entry was read in full above
			seen = -1
		}
	}
}

// waitEvents blocks for at most wait until the event stream key has an
// entry after last, or ctx ends. go-redis does not end a command already
// sent when its context ends, so the XREAD also reads a private stream of
// this call, which a cancelled ctx writes to (as a blocked Claim's
// private wake-up list, spec/keys.md): the wait ends at once.
func (pt *part) waitEvents(ctx context.Context, key, last string, wait time.Duration) ([]redis.XStream, error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	private := pt.keys.prefix + "ewk:" + hex.EncodeToString(rnd[:])
	stop := context.AfterFunc(ctx, func() {
		pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pipe := pt.rdb.Pipeline()
		pipe.XAdd(pctx, &redis.XAddArgs{Stream: private, Values: []any{"w", "1"}})
		pipe.PExpire(pctx, private, time.Minute)
		_, _ = pipe.Exec(pctx)
	})
	defer stop()
	return pt.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{key, private, last, "0-0"}, Count: 1, Block: wait}).Result()
}

// decodeEntry reads one stream entry: t (the call's now, ms) and e, its
// events joined by newlines, each "<type> <id> <attempt> <n> <reason>"
// with n the reason's length in bytes (a reason may hold any byte), then
// " <worker>" for an attempt's event whose claim named a worker (an entry
// written before workers were recorded has none).
func decodeEntry(m redis.XMessage) ([]weir.Event, error) {
	tv, _ := m.Values["t"].(string)
	ms, err := strconv.ParseInt(tv, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: event entry %s: time %q", weir.ErrProtocol, m.ID, tv)
	}
	at := time.UnixMilli(ms).UTC()
	rest, _ := m.Values["e"].(string)
	bad := func(what string) error {
		return fmt.Errorf("%w: event entry %s: %s", weir.ErrProtocol, m.ID, what)
	}
	var out []weir.Event
	for rest != "" {
		if len(out) > 0 {
			if rest[0] != '\n' {
				return nil, bad("no newline between events")
			}
			rest = rest[1:]
		}
		var f [4]string
		for k := range f {
			var ok bool
			if f[k], rest, ok = strings.Cut(rest, " "); !ok {
				return nil, bad("a truncated event")
			}
		}
		a, err1 := strconv.Atoi(f[2])
		n, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || n < 0 || n > len(rest) {
			return nil, bad(fmt.Sprintf("attempt %q, reason length %q", f[2], f[3]))
		}
		e := weir.NewEvent(weir.EventType(f[0]), f[1], a, rest[:n], at)
		rest = rest[n:]
		if rest != "" && rest[0] == ' ' {
			end := strings.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			if e.Worker = rest[1:end]; e.Worker == "" {
				return nil, bad("an empty worker")
			}
			rest = rest[end:]
		}
		e.ID = m.ID + "." + strconv.Itoa(len(out)+1)
		out = append(out, e)
	}
	return out, nil
}
