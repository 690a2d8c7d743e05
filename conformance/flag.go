package conformance

import (
	"flag"
	"strconv"
)

// flagInt reads an integer command-line flag (0 when absent).
func flagInt(name string) int {
	f := flag.Lookup(name)
	if f == nil {
		return 0
	}
	n, _ := strconv.Atoi(f.Value.String())
	return n
}
