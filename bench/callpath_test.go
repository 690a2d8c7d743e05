package bench

import "testing"

type pathStore string

func (p pathStore) CallPath() string { return string(p) }

func TestCallPath(t *testing.T) {
	for _, c := range []struct {
		store any
		want  string
	}{
		{pathStore(CallPathFunctions), CallPathFunctions},
		{pathStore(CallPathScripts), CallPathScripts},
		{pathStore(""), CallPathScripts}, // not decided: what every store did before Functions
		{struct{}{}, CallPathScripts},    // a store without CallPath
		{nil, CallPathScripts},
	} {
		if got := callPath(c.store); got != c.want {
			t.Errorf("callPath(%#v) = %q, want %q", c.store, got, c.want)
		}
	}
}
