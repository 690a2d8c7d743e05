package redisstore

import (
	"errors"
	"github.com/weirflow/weir"
	"strconv"
	"strings"

	"github.com/weirflow/weir/engine"
)

// Dynamic tasks (spec/states.md, Dynamic tasks): the block of finish.lua's
// ARGV that carries one outcome's additions (lua/include/dynamic.lua).

// addStride is the number of strings per added task (dynamic.lua's
// DYN.STRIDE).
const addStride = 11

// appendAddBlock appends outcome o's additions, as dynamic.lua reads them,
// to args.
func appendAddBlock(args []any, o *engine.Outcome, lim weir.Limits) []any {
	gate := argEmpty
	if o.GateDependents {
		gate = "1"
	}
	args = append(args, gate, len(o.Add), lim.MaxTasks, lim.MaxEdges)
	pos := make(map[string]int, len(o.Add))
	for k, t := range o.Add {
		pre, post := specParts(t)
		refs := make([]string, len(t.After))
		for x, a := range t.After {
			if p, ok := pos[a]; ok {
				refs[x] = "#" + strconv.Itoa(p+1)
			} else {
				refs[x] = a
			}
		}
		entry := dependentsField([]engine.TaskSpec{t}, []int{0})
		_, entry, _ = strings.Cut(entry, " ") // without its index: Lua knows it
		uflag, upayload := argEmpty, argEmpty
		if t.Undo != nil && t.Undo.Payload != nil {
			uflag, upayload = "1", bytesArg(t.Undo.Payload)
		}
		args = append(args, t.Name, pre, post, strings.Join(refs, ","), alwaysArg(t), flagArg(t.Undo != nil), entry,
			flagArg(t.Payload != nil), bytesArg(t.Payload), uflag, upayload)
		pos[t.Name] = k
	}
	return args
}

// alwaysArg is an added task's Always argument (dynamic.lua): "1" when
// it is Always and absorbs its dependencies' failures, "2" when it is
// Always and NoAbsorb, empty when it is not Always.
func alwaysArg(t engine.TaskSpec) any {
	switch {
	case engine.Absorbs(t):
		return argOne
	case t.Always:
		return "2"
	}
	return argEmpty
}

// addBlockLen is the number of strings appendAddBlock appends for o.
func addBlockLen(o *engine.Outcome) int { return 4 + addStride*len(o.Add) }

// specParts splits task t's spec field (codec.go taskSpec) around the
// flag B (a failure absorbed), which dynamic.lua adds: before it, the
// fields up to the flags and "A" when Always; after it, the other flags,
// the concurrency key and the undo queue.
func specParts(t engine.TaskSpec) (pre, post string) {
	spec := taskSpec(t, false)
	i := strings.LastIndex(spec[:strings.LastIndex(spec, "|")], "|") + 1 // the flags' start
	if t.Always {
		i++
	}
	return spec[:i], spec[i:]
}

// addError turns finish.lua's refusal of an addition ("<task>|<field>|<problem>"
// after the code) into the weir.ValidationError the model returns.
func addError(err error) error {
	var ce *codeErr
	if !errors.As(err, &ce) || (ce.code != weir.ErrInvalid && ce.code != weir.ErrTooLarge) {
		return err
	}
	parts := strings.SplitN(ce.detail, "|", 3)
	if len(parts) != 3 {
		return err
	}
	return &weir.ValidationError{Task: parts[0], Field: parts[1], Problem: parts[2], TooLarge: ce.code == weir.ErrTooLarge}
}
