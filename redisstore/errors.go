package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"io"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// mapErr turns a Redis or script error into the engine's sentinels: a
// script's result code into its sentinel, OOM into ErrStoreFull, a busy,
// read-only, loading or unreachable server into ErrUnavailable. The
// original error stays in the chain.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		code, rest, _ := strings.Cut(msg, " ")
		if e := weir.ErrorForCode(code); e != nil {
			return &codeErr{code: e, detail: rest}
		}
		switch code {
		case "OOM":
			return fmt.Errorf("%w: %w", weir.ErrStoreFull, err)
		case "BUSY", "READONLY", "LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "MOVED", "ASK":
			return fmt.Errorf("%w: %w", weir.ErrUnavailable, err)
		}
		return fmt.Errorf("%w: %w", weir.ErrProtocol, err)
	}
	var nerr net.Error
	if errors.As(err, &nerr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("%w: %w", weir.ErrUnavailable, err)
	}
	return fmt.Errorf("%w: %w", weir.ErrUnavailable, err)
}

// codeErr is a script's error reply "CODE detail": it matches the code's
// sentinel with errors.Is.
type codeErr struct {
	code   *weir.Error
	detail string
}

func (e *codeErr) Error() string { return e.code.Error() + ": " + e.detail }
func (e *codeErr) Unwrap() error { return e.code }
