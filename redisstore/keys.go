package redisstore

import (
	"fmt"
	"github.com/weirflow/weir"
	"strconv"

	"github.com/weirflow/weir/engine"
)

// ProtocolVersion is the version of the key layout and of the transitions;
// the function library is named "weir<ProtocolVersion>_<hash of its
// source>", and each script starts with "-- weir<ProtocolVersion>_<name>".
// A namespace records it in each partition's P seq, the protocol marker
// (spec/keys.md): the string "3". Protocol 2 kept its seq hash under that
// name; a store refuses such a namespace until weir migrate converted it
// (Store.Migrate, ErrProtocol).
const ProtocolVersion = 3

// keys names the keys of one partition of a namespace. Every key starts with
// the partition's prefix "weir:{<ns>:<p>}:", whose hash tag "<ns>:<p>" puts
// all of them in one Redis Cluster slot. spec/keys.md lists them all.
type keys struct {
	prefix string // weir:{<ns>:<p>}:
	seq    string // hash: now (last now, ms), lease counter, gc (P seq3)
	marker string // the protocol marker (P seq): the string "3"
	queues string // hash: queue name -> "0" | "1" (paused)
	wf     string // zset: every workflow, lex member <created15>:<id>
	expiry string // zset: ended records by removal time
}

// newKeys returns the keys of partition part of namespace ns, which must be
// a valid name (engine.ValidName).
func newKeys(ns string, part int) (keys, error) {
	if !engine.ValidName(ns) {
		return keys{}, fmt.Errorf("%w: namespace %q must "+engine.NameRule, weir.ErrInvalid, ns)
	}
	if part < 0 {
		return keys{}, fmt.Errorf("%w: partition %d", weir.ErrInvalid, part)
	}
	return keysOf(ns + ":" + strconv.Itoa(part)), nil
}

// keysOf returns the keys of the partition whose hash tag is tag
// (partitionTag).
func keysOf(tag string) keys {
	p := "weir:{" + tag + "}:"
	return keys{
		prefix: p, seq: p + "seq3", marker: p + "seq", queues: p + "queues",
		wf: p + "wf", expiry: p + "expiry",
	}
}

// common lists the partition's fixed keys (a call passes only the prefix,
// KEYS[1]; the others are derived from it in Lua).
func (k keys) common() []string {
	return []string{k.prefix, k.seq, k.marker, k.queues, k.wf, k.expiry}
}

// Keys derived (in Lua and in Go) from the prefix and a validated name.
func (k keys) job(id string) string               { return k.prefix + "j:" + id }
func (k keys) workflow(id string) string          { return k.prefix + "w:" + id }
func (k keys) payloads(id string) string          { return k.prefix + "w:" + id + ":p" }
func (k keys) taskStates(id string) string        { return k.prefix + "w:" + id + ":s" }
func (k keys) taskIndex(id string) string         { return k.prefix + "w:" + id + ":i" }
func (k keys) compensationLists(id string) string { return k.prefix + "w:" + id + ":nc" }
func (k keys) stage(id, hash string) string       { return k.prefix + "stage:" + id + ":" + hash }
func (k keys) wfState(st string) string           { return k.prefix + "wf:" + st }
func (k keys) wfIDs() string                      { return k.prefix + "wf:id" }
func (k keys) queue(name, kind string) string     { return k.prefix + "q:" + name + ":" + kind }
func (k keys) wake(queue string) string           { return k.queue(queue, "w") }
func (k keys) waitWorkflow(id string) string      { return k.prefix + "await:w:" + id }
func (k keys) waitWorkflowJobs(wf string) string  { return k.prefix + "await:wj:" + wf }
func (k keys) waitAny() string                    { return k.prefix + "wait:any" }
func (k keys) waitJob(id string) string           { return k.prefix + "await:j:" + id }
func (k keys) chanWorkflow(id string) string      { return k.prefix + "o:w:" + id }
func (k keys) chanJob(id string) string           { return k.prefix + "o:j:" + id }
func (k keys) chanStop() string                   { return k.prefix + "stop" }
func (k keys) chanSchedules() string              { return k.prefix + "schedules" }

// hashTag returns the part of key that Redis Cluster hashes: the text
// between the first '{' and the next '}', when not empty; else the key.
func hashTag(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j == i+1 {
						return key
					}
					return key[i+1 : j]
				}
			}
			return key
		}
	}
	return key
}

// keySlot is CLUSTER KEYSLOT: CRC16 (XMODEM) of the hash tag, mod 16384.
func keySlot(key string) int {
	return int(crc16([]byte(hashTag(key))) % 16384)
}

func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for i := 0; i < 8; i++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
