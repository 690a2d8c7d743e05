package shell

import "testing"

func TestBuffers(t *testing.T) {
	c := &capBuffer{max: 5}
	c.Write([]byte("abc"))
	c.Write([]byte("def"))
	if c.String() != "abcde" || !c.over {
		t.Errorf("capBuffer %q over %v", c.String(), c.over)
	}
	tb := &tailBuffer{max: 4}
	tb.Write([]byte("ab"))
	tb.Write([]byte("cdef"))
	if tb.String() != "cdef" {
		t.Errorf("tailBuffer %q", tb.String())
	}
}
