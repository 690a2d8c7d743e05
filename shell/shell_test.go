package shell

import "testing"

func TestBuffers(t *testing.T) {
	c := &capBuffer{max: 5}
	_, _ = c.Write([]byte("abc"))
	_, _ = c.Write([]byte("def"))
	if c.String() != "abcde" || !c.over {
		t.Errorf("capBuffer %q over %v", c.String(), c.over)
	}
	tb := &tailBuffer{max: 4}
	_, _ = tb.Write([]byte("ab"))
	_, _ = tb.Write([]byte("cdef"))
	if tb.String() != "cdef" {
		t.Errorf("tailBuffer %q", tb.String())
	}
}
