package conformance

import (
	"context"
	"os"

	"github.com/weirflow/weir/engine/scenario"
	"github.com/weirflow/weir/spec"
)

// loadScenarios parses the golden scenarios: the *.txt files of dir when
// given, else those embedded in package spec.
func loadScenarios(dir string) ([]*scenario.Scenario, error) {
	if dir != "" {
		return scenario.ParseFS(os.DirFS(dir), "*.txt")
	}
	return scenario.ParseFS(spec.Scenarios(), "*.txt")
}

func runScenarios(t suiteT, mk maker, o options) {
	all, err := loadScenarios(o.scenarios)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatalf("no golden scenarios (dir %q)", o.scenarios)
	}
	for _, sc := range all {
		t.Run(sc.Name, func(t suiteT) {
			t.Parallel()
			clk := newClock()
			// a golden scenario runs with its own configuration (its
			// partitions included), whatever Partitions says: its expected
			// replies are written for it
			s := mk.newStore(t, sc.Config, clk.Now)
			defer closeStore(s)
			res, err := scenario.Run(context.Background(), sc, scenario.Target{Store: s, SetNow: clk.Set})
			if err != nil {
				t.Fatal(err)
			}
			for _, sk := range res.Skipped {
				t.Logf("skipped (the store lacks what the step needs: scenario.Target): %s", sk)
			}
		})
	}
}
