package redisstore

import (
	"strconv"
	"testing"
)

// TestParseIntAsStrconv: parseInt, the replies' integer reader, answers
// what strconv.ParseInt(s, 10, 64) answers (value, and whether it is an
// error), for the integers replies hold and for what they do not.
func TestParseIntAsStrconv(t *testing.T) {
	for _, s := range []string{
		"0", "7", "-7", "-0", "1893456000000", "-1893456000000", "604800000",
		"999999999999999999", "-999999999999999999", "1000000000000000000",
		"9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"-9223372036854775809", "99999999999999999999", "+5", "", "-", "+",
		"1a", "a1", " 1", "1 ", "1_000", "0x10", "--1", "-+1", "1-", "01", "-01",
		"12345678901234567", "123456789012345678", "1234567890123456789",
	} {
		want, werr := strconv.ParseInt(s, 10, 64)
		got, err := parseInt(s)
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("parseInt(%q) = %d, %v; strconv.ParseInt: %d, %v", s, got, err, want, werr)
		}
	}
}

// FuzzParseInt: parseInt answers as strconv.ParseInt(s, 10, 64) for any
// string.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-12", "1893456000000", "+3", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := strconv.ParseInt(s, 10, 64)
		got, err := parseInt(s)
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("parseInt(%q) = %d, %v; strconv.ParseInt: %d, %v", s, got, err, want, werr)
		}
	})
}
