package bench

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeReport(t *testing.T) {
	old, _ := pair()
	good, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := DecodeReport(good)
	if err != nil || rep.Server != RedisServer || len(rep.Scenarios) != len(old.Scenarios) || rep.Machine.CPUModel != "AMD EPYC" {
		t.Fatalf("%+v, %v", rep, err)
	}
	// What the peers harness writes: a report with fields of its own.
	var m map[string]any
	if err := json.Unmarshal(good, &m); err != nil {
		t.Fatal(err)
	}
	m["lib"], m["suite"], m["rep"] = "weir", "weir-bench", 0
	harness, _ := json.Marshal(m)
	if _, err := DecodeReport(harness); err != nil {
		t.Errorf("harness line: %v", err)
	}
	// A report of before the machine and path were recorded.
	if rep, err := DecodeReport([]byte(`{"server":"redis","redis_version":"7.0.15","ceiling_per_s":5,"scenarios":[{"name":"plain","concurrency":1,"processes":1,"jobs_per_s":9}]}`)); err != nil || rep.CallPath != "" || rep.Scenarios[0].JobsPerS != 9 {
		t.Errorf("older report: %+v, %v", rep, err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "not JSON: the file is empty"},
		{"not JSON", "scenario plain 1,000 jobs/s", "not JSON"},
		{"cut short", string(good[:len(good)/2]), "not JSON"},
		{"JSON lines", string(good) + "\n" + string(good), "more than one JSON value"},
		{"array", "[1,2]", "not a weir bench report: a JSON array, not an object"},
		{"number", "42", "a JSON number"},
		{"other object", `{"lib":"bullmq","jobs_per_s":9000}`, `no "server"`},
		{"no scenarios", `{"server":"redis"}`, `no "scenarios"`},
		{"scenarios not a list", `{"server":"redis","scenarios":{"plain":1}}`, `"scenarios" is not a list`},
		{"wrong type", `{"server":"redis","scenarios":[{"name":"plain","jobs_per_s":"fast"}]}`, "not a weir bench report: json: cannot unmarshal"},
		{"unnamed row", `{"server":"redis","scenarios":[{"jobs_per_s":1}]}`, "scenario 0 has no name"},
	} {
		rep, err := DecodeReport([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %+v, %v; want an error with %q", c.name, rep, err, c.want)
		}
	}
}

func TestReadReport(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	if _, err := ReadReport(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReport(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": not JSON") {
		t.Errorf("bad file: %v", err)
	}
	old, _ := pair()
	b, _ := json.MarshalIndent(old, "", "  ")
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, err := ReadReport(good); err != nil || rep.CeilingPerS != old.CeilingPerS {
		t.Errorf("good file: %+v, %v", rep, err)
	}
}
