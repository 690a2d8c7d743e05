package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the comparison as a table: a header with both runs
// and the warnings, then one line per figure of each row found in both
// runs, then the rows found in one run only.
func (c *Comparison) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "weir bench comparison: new/old of each figure (better: which way is better; same: within ±%.0f%%)\n", SameWithin*100)
	fmt.Fprintf(&b, "old: %s\n", sideLine(c.Old))
	fmt.Fprintf(&b, "new: %s\n", sideLine(c.New))
	for _, warn := range c.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", warn)
	}
	b.WriteString("\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tconc\tprocs\tfigure\tbetter\told\tnew\tnew/old\tchange")
	if c.Ceiling.Old != nil || c.Ceiling.New != nil { // a spread has none
		writeFigure(tw, "ceiling\t-\t-", c.Ceiling)
	}
	for _, s := range c.Scenarios {
		name := s.Name
		if s.Variant != "" {
			name += " " + s.Variant
		}
		key := fmt.Sprintf("%s\t%d\t%d", name, s.Concurrency, s.Processes)
		for _, f := range s.Figures {
			writeFigure(tw, key, f)
		}
	}
	_ = tw.Flush()
	for _, only := range []struct {
		which string
		side  Side
		keys  []ScenarioKey
	}{{"old", c.Old, c.OnlyOld}, {"new", c.New, c.OnlyNew}} {
		if len(only.keys) == 0 {
			continue
		}
		names := make([]string, len(only.keys))
		for i, k := range only.keys {
			names[i] = k.String()
		}
		fmt.Fprintf(&b, "\nonly in the %s run (%s): %s\n", only.which, only.side.Source, strings.Join(names, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFigure(w io.Writer, key string, f FigureComparison) {
	label := figureLabels[f.Figure]
	if label == "" {
		label = f.Figure
	}
	ratio, change := "n/a", f.Change
	if f.Ratio != nil {
		ratio = fmt.Sprintf("%.3f×", *f.Ratio)
	}
	if change == "" {
		change = "-"
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", key, label, f.Better, figureValue(f.Old), figureValue(f.New), ratio, change)
}

// figureValue formats a figure: thousands separators from 100 up, more
// decimals below; "n/a" when the run has none.
func figureValue(v *float64) string {
	switch {
	case v == nil:
		return "n/a"
	case math.Abs(*v) >= 100:
		return num(*v)
	case math.Abs(*v) >= 1:
		return fmt.Sprintf("%.2f", *v)
	}
	return fmt.Sprintf("%.3f", *v)
}

// sideLine is the header line of one run: where it came from, its server,
// path and machine.
func sideLine(s Side) string {
	path := s.CallPath
	if path == "" {
		path = "path not recorded"
	}
	line := fmt.Sprintf("%s: %s, %s", s.Source, serverName(s), path)
	m := s.Machine
	if m.Cores == 0 {
		return line + "; machine not recorded"
	}
	line += fmt.Sprintf("; %s, %d cores, %s/%s, %s", orUnknown(m.CPUModel), m.Cores, m.OS, m.Arch, m.GoVersion)
	return line + fmt.Sprintf("; load %s before, %s after", loadOne(m.LoadBefore), loadOne(m.LoadAfter))
}

// loadOne is the 1-minute load average, "?" when not recorded.
func loadOne(l *Load) string {
	if l == nil {
		return "?"
	}
	return fmt.Sprintf("%.2f", l.One)
}
