package conformance

import (
	"flag"
	"strconv"
)

// flagInt reads an integer flag of the default flag set.
func flagInt(name string) (int, bool) {
	f := flag.Lookup(name)
	if f == nil {
		return 0, false
	}
	n, err := strconv.Atoi(f.Value.String())
	return n, err == nil
}
