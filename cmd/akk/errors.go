package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"syscall"
)

// Exit codes by class (akk help lists them): a script tells what went wrong
// without reading the message.
const (
	exitOther       = 1
	exitUsage       = 2 // a mistake in the command line
	exitUnreachable = 3 // akkd does not answer
	exitNotFound    = 4 // the API answered 404
	exitRefused     = 5 // the API refused: a conflict (409), forbidden (403), unprocessable (422), or a wrong token (401)
	exitUncertain   = 6 // input may have reached the agent and is unproven: look, never repeat
)

// cliError is an error with its exit class.
type cliError struct {
	code int
	msg  string
}

func (e *cliError) Error() string { return e.msg }

// usageErr is a usage mistake.
func usageErr(msg string) error { return &cliError{code: exitUsage, msg: msg} }

// uncertainErr ends a command whose outcome is unproven (exit 6), after
// it printed what it knows.
var uncertainErr = &cliError{code: exitUncertain, msg: "the outcome is uncertain: do not repeat it; look at the pane first"}

// apiError is a non-2xx answer of the API.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// exitCode is the class of err.
func exitCode(err error) int {
	var ce *cliError
	var ae *apiError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &ae):
		switch ae.status {
		case 400:
			return exitUsage
		case 404:
			return exitNotFound
		case 401, 403, 409, 422:
			return exitRefused
		}
		return exitOther
	case strings.HasPrefix(err.Error(), "usage:"):
		return exitUsage
	case unreachable(err):
		return exitUnreachable
	}
	return exitOther
}

// unreachable reports whether err is a failure to reach akkd at all.
func unreachable(err error) bool {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return false
	}
	var oe *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		(errors.As(err, &oe) && oe.Op == "dial")
}

// explain turns an error into what the person should do next.
func (c *cli) explain(err error) error {
	if err == nil {
		return nil
	}
	var ae *apiError
	switch {
	case unreachable(err):
		return &cliError{code: exitUnreachable, msg: fmt.Sprintf("akkd does not answer at %s.\n"+
			"  Start it in another terminal:  akkd   (or: make build && bin/akkd)\n"+
			"  or point akk at it:            akk --url HOST:PORT …   (env AKK_URL)", c.url)}
	case errors.As(err, &ae) && ae.status == 401:
		where := "the token given with --token or AKK_TOKEN"
		if c.tokenFile != "" {
			where = "the token read from " + c.tokenFile
		}
		return &apiError{status: 401, code: ae.code, msg: ae.msg + "\n  akkd refused " + where + ".\n" +
			"  The operator token is the file operator.token in akkd's state dir (--state-dir; akkd prints the path at start).\n" +
			"  A host's token is printed once by `akk hosts add` (or `akk hosts rotate-token HOST_ID`)."}
	}
	return err
}

// normalizeURL accepts host:port (and a bare :port) for the daemon's
// address, as a person types it.
func normalizeURL(u string) (string, error) {
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	if !strings.Contains(u, "://") {
		if strings.HasPrefix(u, ":") {
			u = "127.0.0.1" + u
		}
		u = "http://" + u
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", usageErr(fmt.Sprintf("--url %q is not an address of akkd: give http://HOST:PORT or HOST:PORT", u))
	}
	return u, nil
}

// didYouMean names the known words closest to w (edit distance at most 2).
func didYouMean(w string, known []string) string {
	type cand struct {
		s string
		d int
	}
	var cs []cand
	for _, k := range known {
		if d := distance(w, k); d <= 2 || (len(w) >= 3 && strings.HasPrefix(k, w)) {
			cs = append(cs, cand{k, d})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	return cs[0].s
}

// distance is the Damerau–Levenshtein distance of a and b (adjacent swaps
// count one).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
