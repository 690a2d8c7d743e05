package rest

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The checks that keep a web page from driving the API from a browser
// (spec/rest.md#browsers). A browser sends some requests to any address
// without asking it first (no CORS preflight): GET, HEAD and POST with a
// text/plain, form or multipart body and no custom header. The API
// refuses every one of them:
//
//   - Host: without a token, a request must name the loopback address and
//     port it arrived on (or localhost with that port). A page whose own
//     name resolves to 127.0.0.1 (DNS rebinding) sends its own name: 421.
//   - Origin: a browser names the page that sent a request in Origin; one
//     that is not the API's own origin or one of Config.Origins is
//     refused on every route: 403.
//   - Sec-Fetch-Site: a request a browser marks cross-site or same-site
//     without an Origin header is refused too: 403.
//   - Content-Type: a body must be application/json or application/yaml,
//     which a page cannot send without a preflight the API never grants:
//     415.

// Codes of the guard's refusals.
const (
	codeHost      = "HOST"      // 421: the Host header is not this server's address
	codeOrigin    = "ORIGIN"    // 403: a request from another web origin
	codeMediaType = "MEDIATYPE" // 415: a body of another media type
)

// bodyTypes are the media types a request body may have.
var bodyTypes = []string{"application/json", "application/yaml"}

// served is the address a request arrived on: the listener's IP and port.
type served struct {
	ip   net.IP
	port string
}

// servedAddr returns the local address of r's connection; ok is false when
// the server does not tell (a handler called without a listener).
func servedAddr(r *http.Request) (served, bool) {
	a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if a == nil {
		return served{}, false
	}
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return served{}, false
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return served{}, false
	}
	return served{ip, port}, true
}

// hosts returns the host:port forms of the served address a client may
// use: the IP itself and, for a loopback IP, localhost.
func (s served) hosts() []string {
	hs := []string{net.JoinHostPort(s.ip.String(), s.port)}
	if s.ip.IsLoopback() {
		hs = append(hs, net.JoinHostPort("localhost", s.port))
	}
	return hs
}

// has reports whether hostport (host:port, port required) is one of the
// served address's forms.
func (s served) has(hostport string) bool {
	for _, h := range s.hosts() {
		if strings.EqualFold(h, hostport) {
			return true
		}
	}
	return false
}

// withPort returns host with the port of scheme's default when it has none.
func withPort(host, scheme string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// CheckOrigin returns an error unless s is a web origin Config.Origins may hold:
// scheme://host[:port] with scheme http or https, nothing else.
func CheckOrigin(s string) error {
	_, err := canonicalOrigin(s)
	return err
}

// canonicalOrigin parses a web origin (scheme://host[:port]) into its
// canonical form: lower case, with the scheme's default port written out.
func canonicalOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("%q is not a URL", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%q: the scheme must be http or https", s)
	case u.Host == "" || u.Hostname() == "":
		return "", fmt.Errorf("%q has no host", s)
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return "", fmt.Errorf("%q is not an origin: only scheme://host[:port]", s)
	}
	if p := u.Port(); p == "" && strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("%q has an empty port", s)
	}
	return u.Scheme + "://" + strings.ToLower(withPort(u.Host, u.Scheme)), nil
}

// guardRequest refuses a request a web page could have sent (see above);
// it writes the error and returns false.
func (a *api) guardRequest(w http.ResponseWriter, r *http.Request) bool {
	s, known := servedAddr(r)
	if a.cfg.Token == "" {
		switch {
		case !known:
			writeError(w, http.StatusMisdirectedRequest, apiError{Code: codeHost, Field: "Host", Message: "without a token the API answers only requests to its loopback address, and this server cannot tell its address"})
			return false
		case !s.ip.IsLoopback():
			writeError(w, http.StatusMisdirectedRequest, apiError{Code: codeHost, Field: "Host", Message: "without a token the API answers only on a loopback address"})
			return false
		case !s.has(withPort(r.Host, "http")):
			writeError(w, http.StatusMisdirectedRequest, apiError{Code: codeHost, Field: "Host", Message: fmt.Sprintf(
				"the Host %q is not this server's address: without a token the API answers only requests to %s (a page whose name resolves to this machine is refused)",
				r.Host, strings.Join(s.hosts(), " or "))})
			return false
		}
	}
	origin, sent := r.Header["Origin"]
	if sent {
		if len(origin) != 1 || !a.originAllowed(origin[0], s, known) {
			writeError(w, http.StatusForbidden, apiError{Code: codeOrigin, Field: "Origin", Message: fmt.Sprintf(
				"requests from the web origin %q are refused: the API answers pages of its own origin and of the configured ones only", strings.Join(origin, ", "))})
			return false
		}
		return true
	}
	switch strings.ToLower(r.Header.Get("Sec-Fetch-Site")) {
	case "cross-site", "same-site":
		writeError(w, http.StatusForbidden, apiError{Code: codeOrigin, Field: "Sec-Fetch-Site", Message: "a request a browser sent from another site is refused"})
		return false
	}
	return true
}

// originAllowed reports whether the Origin header o is the API's own
// origin (http:// and the served address) or a configured one.
func (a *api) originAllowed(o string, s served, known bool) bool {
	c, err := canonicalOrigin(o)
	if err != nil {
		return false // "null" among others
	}
	if a.origins[c] {
		return true
	}
	rest, ok := strings.CutPrefix(c, "http://")
	return ok && known && s.has(rest)
}

// checkBodyType refuses a request body that is not JSON or YAML; it
// returns the media type, or "" after writing the error.
func checkBodyType(w http.ResponseWriter, r *http.Request) string {
	refuse := func(msg string) string {
		w.Header().Set("Accept-Post", strings.Join(bodyTypes, ", "))
		writeError(w, http.StatusUnsupportedMediaType, apiError{Code: codeMediaType, Field: "Content-Type", Message: msg})
		return ""
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return refuse(fmt.Sprintf("Content-Encoding %q is not supported: send the body as is", ce))
	}
	raw := r.Header.Values("Content-Type")
	if len(raw) != 1 {
		return refuse("the body needs one Content-Type: application/json or application/yaml")
	}
	ct, params, err := mime.ParseMediaType(raw[0])
	if err != nil {
		return refuse(fmt.Sprintf("Content-Type %q does not parse: send application/json or application/yaml", raw[0]))
	}
	known := false
	for _, t := range bodyTypes {
		known = known || ct == t
	}
	if !known {
		return refuse(fmt.Sprintf("Content-Type %q is not accepted: send application/json or application/yaml", ct))
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return refuse(fmt.Sprintf("Content-Type parameter %s=%q is not accepted: the body is UTF-8 (charset=utf-8 may be given)", k, v))
		}
	}
	return ct
}
