package domain_test

import (
	"bytes"
	"encoding/json"
	"log"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"akk/domain"
)

// syncBuffer is a log's lines, each write waking its waiters.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

// next is closed at the next write.
func (s *syncBuffer) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written == nil {
		s.written = make(chan struct{})
	}
	return s.written
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A Send, its acceptance and its completion each leave one info line with
// the Turn's id; none carries the request or the final message.
func TestActivityLogLines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf syncBuffer
		// Setting slog's default sends the log package's output there too,
		// and setting the first default back does not undo that.
		prev, prevOut, prevFlags := slog.Default(), log.Writer(), log.Flags()
		slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
		t.Cleanup(func() { slog.SetDefault(prev); log.SetOutput(prevOut); log.SetFlags(prevFlags) })

		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "fix the secret bug"})
		if err != nil {
			t.Fatal(err)
		}
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true} })
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		ft.set(func(f *fakeTerm) { f.progress.Completed, f.progress.FinalMessage = true, "fixed the private thing" })
		w.waitState(t, r.Turn.ID, domain.TurnCompleted)
		// The line follows the commit the state was read from: wait for it.
		w.untilOn(t, buf.next, func() string {
			if strings.Contains(buf.String(), `"msg":"turn.completed"`) {
				return ""
			}
			return "no turn.completed line:\n" + buf.String()
		})

		seen := map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(l), &rec) != nil || rec["turn_id"] != r.Turn.ID {
				continue
			}
			if rec["level"] != "INFO" {
				t.Errorf("not at info: %s", l)
			}
			seen[rec["msg"].(string)]++
			if strings.Contains(l, "secret bug") || strings.Contains(l, "private thing") {
				t.Errorf("a line carries the text: %s", l)
			}
		}
		if seen["send"] != 1 || seen["turn.accepted"] != 1 || seen["turn.completed"] != 1 {
			t.Fatalf("lines %v, want one send, turn.accepted and turn.completed\n%s", seen, buf.String())
		}
	})
}
