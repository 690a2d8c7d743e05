package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
)

// The protocol marker (spec/keys.md, P seq): each partition's P seq is the
// string "3" once a store of this protocol wrote it (its first write call
// in the partition) or weir migrate converted it. Protocol 2 kept its seq
// hash under that name, and every one of its calls starts with an HMGET of
// it: a protocol 2 build fails on a namespace of protocol 3 (WRONGTYPE)
// before it writes anything, and a store of this build reads P seq3, the
// seq hash, with the same one HMGET, and the marker only in a partition it
// has not written yet.

// ErrNeedsMigration is the error of every call to a namespace that a
// store of this protocol cannot use yet: one written by protocol 2 (an
// earlier build of weir), or one that weir migrate is converting. Nothing
// is written. errors.Is matches it and weir.ErrProtocol. Stop the
// processes of the older build, run `weir migrate` (Store.Migrate) to
// convert the namespace, then start this build's (docs/upgrading.md).
var ErrNeedsMigration = fmt.Errorf("%w: the namespace needs `weir migrate`", weir.ErrProtocol)

// needsMigration is ErrNeedsMigration for the namespace or partition named
// by where.
func needsMigration(where string) error {
	return fmt.Errorf("%w: %s was written by protocol 2 of weir, or weir migrate is converting it; this build speaks protocol %d and writes nothing there: stop the processes of the older build, run `weir migrate` (redisstore.Store.Migrate; again if a run was stopped), then start this build's (docs/upgrading.md)", ErrNeedsMigration, where, ProtocolVersion)
}

// checkMarker checks a namespace's protocol marker as read by GET (cmd):
// absent (a namespace not written yet) or this protocol's is nil; another
// type (protocol 2's seq hash, or the list of a migration under way) is
// ErrNeedsMigration; another value (a later protocol's) is ErrProtocol.
func checkMarker(ns string, cmd *redis.StringCmd) error {
	v, err := cmd.Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil
	case isWrongType(err):
		return needsMigration(fmt.Sprintf("namespace %q", ns))
	case err != nil:
		return mapErr(err)
	case v != strconv.Itoa(ProtocolVersion):
		return fmt.Errorf("%w: namespace %q is of protocol %q; this build speaks protocol %d (README.md, Versioning)", weir.ErrProtocol, ns, v, ProtocolVersion)
	}
	return nil
}

// isWrongType reports a WRONGTYPE error, alone or inside a script's error.
func isWrongType(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.Contains(rerr.Error(), "WRONGTYPE")
}

// explain returns err, a call's error mapped, or ErrNeedsMigration when
// the call failed on the partition's protocol marker (read_clock, call.lua:
// a WRONGTYPE there means protocol 2's seq hash or a migration's list).
// It reads the marker again only on such an error.
func (pt *part) explain(ctx context.Context, raw, mapped error) error {
	if !isWrongType(raw) || ctx.Err() != nil {
		return mapped
	}
	if err := pt.rdb.Get(ctx, pt.keys.marker).Err(); isWrongType(err) {
		return needsMigration("partition " + pt.keys.prefix)
	}
	return mapped
}
