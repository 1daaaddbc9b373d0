package handlers

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"akk/domain"
)

// Which hosts the daemon serves. A page of another site whose name was
// made to point at this machine (DNS rebinding) sends its own name as
// Host and Origin: a request must name a host the daemon serves, and an
// Origin, where a browser sends one, must be such a host's page.

// loopbackNames are always served.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

type hostPolicy struct {
	any   bool            // "*": the Host is not checked (a reverse proxy does)
	names map[string]bool // hostName form
}

func newHostPolicy(allowed []string) hostPolicy {
	hp := hostPolicy{names: map[string]bool{}}
	for _, h := range append(loopbackNames, allowed...) {
		if h = strings.TrimSpace(h); h == "*" {
			hp.any = true
		} else if n := hostName(h); n != "" {
			hp.names[n] = true
		}
	}
	return hp
}

// hostName is a Host value's name, lower case, without its port, the
// brackets of an IPv6 address or a trailing dot.
func hostName(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// hostAllowed reports whether the daemon serves r's Host.
func (hp hostPolicy) hostAllowed(r *http.Request) bool {
	return hp.any || hp.names[hostName(r.Host)]
}

// originAllowed reports whether r's Origin, if it has one, is an http(s)
// page of a host the daemon serves (with "*", of the request's own host).
func (hp hostPolicy) originAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	name := hostName(u.Host)
	if hp.any {
		return name != "" && name == hostName(r.Host)
	}
	return hp.names[name]
}

// checkHost refuses a request whose Host the daemon does not serve,
// before any route sees it.
func (hp hostPolicy) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hp.hostAllowed(r) {
			writeError(w, r, domain.E(domain.CodeHostNotAllowed,
				"this daemon does not serve host "+r.Host+"; add it to --allowed-hosts (AKK_ALLOWED_HOSTS)"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func errOrigin() error {
	return domain.E(domain.CodeOriginNotAllowed, "requests from this Origin are not allowed; add its host to --allowed-hosts (AKK_ALLOWED_HOSTS)")
}
