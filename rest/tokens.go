package rest

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Read-only and read-write tokens (spec/rest.md#authentication): the
// token of Config.Token may do everything, those of Config.ReadTokens only
// GET and HEAD.

// access is what a request's token allows.
type access int

const (
	accessNone  access = iota // no token, or a wrong one: 401
	accessRead                // a read-only token: GET and HEAD only
	accessWrite               // the read-write token, or no token configured
)

// readTokenSums checks cfg.ReadTokens and returns their SHA-256 sums.
func readTokenSums(cfg Config) ([][sha256.Size]byte, error) {
	if len(cfg.ReadTokens) == 0 {
		return nil, nil
	}
	if cfg.Token == "" {
		return nil, errors.New("rest: Config.ReadTokens without Config.Token: set the read-write token too (without a token every request may write)")
	}
	sums := make([][sha256.Size]byte, 0, len(cfg.ReadTokens))
	for i, tok := range cfg.ReadTokens {
		if err := CheckToken(fmt.Sprintf("rest: Config.ReadTokens[%d]", i), tok); err != nil {
			return nil, err
		}
		if tok == cfg.Token {
			return nil, fmt.Errorf("rest: Config.ReadTokens[%d] is Config.Token: a token is read-only or read-write, not both", i)
		}
		sums = append(sums, sha256.Sum256([]byte(tok)))
	}
	return sums, nil
}

// access returns what r's bearer token allows, comparing in constant time
// (over SHA-256 sums, so the length does not show either) against every
// token, whichever matches. With no token configured every request may
// write.
func (a *api) access(r *http.Request) access {
	if a.cfg.Token == "" {
		return accessWrite
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	ok = ok && strings.EqualFold(scheme, "Bearer")
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	write := subtle.ConstantTimeCompare(sum[:], a.tokenSum[:])
	read := 0
	for _, rs := range a.readSums {
		read |= subtle.ConstantTimeCompare(sum[:], rs[:])
	}
	switch {
	case ok && write == 1:
		return accessWrite
	case ok && read == 1:
		return accessRead
	}
	return accessNone
}
