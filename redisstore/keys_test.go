package redisstore

import (
	"github.com/weirflow/weir"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestKeySlotKnownValues(t *testing.T) {
	// Values of CLUSTER KEYSLOT on a real cluster.
	for key, want := range map[string]int{
		"foo": 12182, "bar": 5061, "somekey": 11058, "{user1000}.following": 3443,
		"{user1000}.followers": 3443, "foo{}{bar}": 8363, "foo{{bar}}zap": 4015, "foo{bar}{zap}": 5061,
	} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
}

// allKeys lists one key of every pattern any script touches.
func allKeys(k keys, wf, task, job, queue string) []string {
	out := k.common()
	tj := weir.TaskJobID(wf, task)
	out = append(out, k.job(job), k.workflow(wf), k.payloads(wf), k.taskStates(wf), k.taskIndex(wf), k.compensationLists(wf),
		k.stage(wf, strings.Repeat("f", 64)), k.stage(wf, strings.Repeat("f", 64))+":p", k.stage(wf, strings.Repeat("f", 64))+":i", k.prefix+"wk:0123456789abcdef", k.prefix+"ewk:0123456789abcdef", k.waitWorkflow(wf),
		k.waitWorkflowJobs(wf), k.waitJob(job), k.chanWorkflow(wf), k.chanJob(job), k.chanJob(tj),
		k.chanJob(weir.UndoJobID(wf, task)))
	for _, st := range workflowStates {
		out = append(out, k.wfState(string(st)))
	}
	out = append(out, k.wfIDs())
	for _, kind := range []string{"r", "l", "lx", "d", "a", "w", "s", "x", "failed", "cancelled", "completed"} {
		out = append(out, k.queue(queue, kind))
	}
	return out
}

// TestOneSlotPerScript: every key of a partition hashes to its slot, for
// names at the edges of what validation lets through.
func TestOneSlotPerScript(t *testing.T) {
	for _, ns := range []string{"default", "a", strings.Repeat("N", 64), "x.y-z_0"} {
		k, err := newKeys(ns, 0)
		if err != nil {
			t.Fatal(err)
		}
		slot := keySlot(k.prefix)
		for _, names := range [][4]string{
			{"wf", "task", "job", "q"},
			{strings.Repeat("w", 128), strings.Repeat("t", 64), strings.Repeat("j", 128), strings.Repeat("q", 64)},
			{"-", ".", "_", "0"},
		} {
			for _, d := range scriptDefs {
				for _, key := range allKeys(k, names[0], names[1], names[2], names[3]) {
					if got := keySlot(key); got != slot {
						t.Errorf("script %s: key %q is in slot %d, the partition's is %d", d.name, key, got, slot)
					}
					if hashTag(key) != ns+":0" {
						t.Errorf("key %q: hash tag %q", key, hashTag(key))
					}
				}
			}
		}
	}
	if _, err := newKeys("a{b}", 0); err == nil {
		t.Error("a namespace with braces was accepted")
	}
}

// TestLuaDerivesKeysFromPrefix: inside Lua, every key built by
// concatenation starts from the partition prefix P.
func TestLuaDerivesKeysFromPrefix(t *testing.T) {
	call := regexp.MustCompile(`redis\.p?call\('([A-Z]+)', ([^,)]+)`)
	for _, dir := range []string{luaScripts, luaInclude} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, _ := os.ReadFile(dir + "/" + e.Name())
			for _, m := range call.FindAllStringSubmatch(string(b), -1) {
				if m[1] == "TIME" {
					continue
				}
				if strings.Contains(m[2], "..") && !strings.HasPrefix(m[2], "P ..") {
					t.Errorf("%s: %s builds its key as %q, not from the prefix", e.Name(), m[1], m[2])
				}
			}
		}
	}
}
