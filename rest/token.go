package rest

import (
	"fmt"
	"strings"
)

// The bearer token of the REST API (spec/rest.md#authentication).

// MinTokenLen is the shortest token CheckToken accepts. One of
// crypto/rand.Text is 26 characters (130 random bits).
const MinTokenLen = 16

// CheckToken refuses a token that is blank, shorter than MinTokenLen or
// not printable ASCII without spaces (it travels in an HTTP header). The
// error starts with source, which names where the token came from (a flag,
// an environment variable).
func CheckToken(source, tok string) error {
	switch {
	case strings.TrimSpace(tok) == "":
		return fmt.Errorf("%s is blank: give a token of at least %d characters", source, MinTokenLen)
	case len(tok) < MinTokenLen:
		return fmt.Errorf("%s is %d characters: a token needs at least %d (openssl rand -hex 16 makes one)", source, len(tok), MinTokenLen)
	}
	for _, c := range []byte(tok) {
		if c < 0x21 || c > 0x7e {
			return fmt.Errorf("%s holds a space, a control character or non-ASCII: a token is printable ASCII (it is sent in a header)", source)
		}
	}
	return nil
}
