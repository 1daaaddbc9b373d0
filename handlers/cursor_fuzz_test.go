package handlers

import (
	"strconv"
	"testing"

	"akk/domain"
)

// FuzzEventCursor reads arbitrary Last-Event-ID and since values: a cursor
// is a non-negative event id or a 4xx problem, never anything else.
func FuzzEventCursor(f *testing.F) {
	for _, s := range []string{"", "0", "42", "-1", "x1", "9223372036854775808", " 7", "1e3"} {
		f.Add(s, int64(3), true)
	}
	f.Fuzz(func(t *testing.T, lastEventID string, since int64, withSince bool) {
		var sp *int64
		if withSince {
			sp = &since
		}
		got, err := sseCursor(&lastEventID, sp)
		if err != nil {
			if s := StatusOf(domain.ErrorCode(err)); s != 400 && s != 422 {
				t.Fatalf("cursor %q: %v is not a 4xx refusal", lastEventID, err)
			}
			return
		}
		if lastEventID != "" {
			if n, perr := strconv.ParseInt(lastEventID, 10, 64); perr != nil || n != got || n < 0 {
				t.Fatalf("cursor %q read as %d", lastEventID, got)
			}
		}
	})
}
