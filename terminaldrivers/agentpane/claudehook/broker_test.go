package claudehook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"
)

type world struct {
	b       *Broker
	srv     *httptest.Server
	clock   *quartz.Mock
	token   string
	tokFile string
	mu      sync.Mutex
	changed []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{clock: quartz.NewMock(t), token: "akk_hook_secret"}
	w.tokFile = filepath.Join(t.TempDir(), "claude-hook.token")
	if err := os.WriteFile(w.tokFile, []byte(w.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.b = New(Config{TokenFile: w.tokFile, Clock: w.clock,
		Bind: func(_ context.Context, session, transcript string) (Binding, bool) {
			if session == "s-listed" {
				return Binding{TerminalID: "term_a"}, true
			}
			return Binding{}, false
		},
		Changed: func(id string) { w.mu.Lock(); w.changed = append(w.changed, id); w.mu.Unlock() }})
	w.srv = httptest.NewServer(w.b)
	t.Cleanup(w.srv.Close)
	return w
}

func permission(session, command string) string {
	in, _ := json.Marshal(map[string]any{"command": command, "description": "d"})
	b, _ := json.Marshal(map[string]any{"hook_event_name": "PermissionRequest", "session_id": session,
		"transcript_path": "/x/" + session + ".jsonl", "tool_name": "Bash", "tool_input": json.RawMessage(in)})
	return string(b)
}

// post sends an event and returns the status and body (in the background
// when async).
func (w *world) post(ctx context.Context, token, body string) (int, string, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", w.srv.URL+Path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), nil
}

type reply struct {
	code int
	body string
	err  error
}

func (w *world) postAsync(ctx context.Context, body string) <-chan reply {
	ch := make(chan reply, 1)
	go func() {
		code, b, err := w.post(ctx, w.token, body)
		ch <- reply{code, b, err}
	}()
	return ch
}

// waitOpen waits until the broker holds a request of term_a.
func (w *world) waitOpen(t *testing.T) Prompt {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if p, ok := w.b.Open("term_a", "s-listed"); ok {
			return p
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no request opened")
	return Prompt{}
}

func TestCredential(t *testing.T) {
	w := newWorld(t)
	for _, tok := range []string{"", "wrong", "akk_op_secret"} {
		if code, _, _ := w.post(context.Background(), tok, permission("s-listed", "ls")); code != 401 {
			t.Fatalf("token %q: %d", tok, code)
		}
	}
	// Revoked: the file replaced, the old credential refused at once.
	if err := os.WriteFile(w.tokFile, []byte("akk_hook_other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := w.post(context.Background(), w.token, `{"hook_event_name":"Stop","session_id":"s"}`); code != 401 {
		t.Fatalf("revoked credential: %d", code)
	}
	if code, _, _ := w.post(context.Background(), "akk_hook_other", `{"hook_event_name":"Stop","session_id":"s"}`); code != 200 {
		t.Fatalf("new credential: %d", code)
	}
	if code, _, _ := w.post(context.Background(), "akk_hook_other", `not json`); code != 400 {
		t.Fatalf("bad body: %d", code)
	}
}

func TestUnboundAndOtherToolsAreAnsweredEmptyAtOnce(t *testing.T) {
	w := newWorld(t)
	for _, body := range []string{
		permission("s-elsewhere", "touch x"), // a Claude Code AKK does not list
		`{"hook_event_name":"PermissionRequest","session_id":"s-listed","tool_name":"Edit","tool_input":{"file_path":"a"}}`,
		`{"hook_event_name":"PermissionRequest","session_id":"s-listed","tool_name":"AskUserQuestion","tool_input":{}}`,
	} {
		code, b, err := w.post(context.Background(), w.token, body)
		if err != nil || code != 200 || b != "{}" {
			t.Fatalf("%s: %d %q %v", body, code, b, err)
		}
	}
	if _, ok := w.b.Open("term_a", "s-listed"); ok {
		t.Fatal("a request is held")
	}
	if !w.b.Live("s-listed") || !w.b.Live("s-elsewhere") || w.b.Live("s-never") {
		t.Fatal("live sessions")
	}
}

func TestDecideAnswersOnce(t *testing.T) {
	for _, d := range []Decision{Allow, Deny} {
		w := newWorld(t)
		got := w.postAsync(context.Background(), permission("s-listed", "touch x"))
		p := w.waitOpen(t)
		if p.Command != "touch x" || p.Tool != "Bash" || !strings.HasPrefix(p.Fingerprint, FingerprintPrefix) {
			t.Fatalf("prompt %+v", p)
		}
		if err := w.b.Decide(context.Background(), p.Fingerprint, d); err != nil {
			t.Fatal(err)
		}
		r := <-got
		var out struct {
			HookSpecificOutput struct {
				HookEventName string
				Decision      struct{ Behavior string }
			}
		}
		if r.code != 200 || json.Unmarshal([]byte(r.body), &out) != nil || out.HookSpecificOutput.HookEventName != "PermissionRequest" ||
			out.HookSpecificOutput.Decision.Behavior != string(d) {
			t.Fatalf("answer %+v", r)
		}
		if err := w.b.Decide(context.Background(), p.Fingerprint, d); !errors.Is(err, ErrGone) {
			t.Fatalf("second decision: %v", err)
		}
	}
}

func TestRequestEndsWithoutAnswer(t *testing.T) {
	cases := map[string]func(w *world, cancel context.CancelFunc, p Prompt){
		// The person rejected or interrupted in the pane: Claude Code
		// ends the request.
		"client gone": func(_ *world, cancel context.CancelFunc, _ Prompt) { cancel() },
		// The person approved in the pane: the tool ran.
		"tool used": func(w *world, _ context.CancelFunc, _ Prompt) {
			w.post(context.Background(), w.token, `{"hook_event_name":"PostToolUse","session_id":"s-listed","tool_name":"Bash","tool_input":{"description":"d","command":"touch x"}}`)
		},
		"turn stopped": func(w *world, _ context.CancelFunc, _ Prompt) {
			w.post(context.Background(), w.token, `{"hook_event_name":"Stop","session_id":"s-listed"}`)
		},
		// The dialog was drawn, then left the screen: gone from every
		// look for DialogGone (one look without it, or a look that shows
		// it again in between, proves nothing).
		"dialog gone": func(w *world, _ context.CancelFunc, p Prompt) {
			if !w.b.Dialog(p.Fingerprint, true) || !w.b.Dialog(p.Fingerprint, false) {
				panic("one look without the dialog ended it")
			}
			w.clock.Advance(DialogGone / 2).MustWait(context.Background())
			if !w.b.Dialog(p.Fingerprint, true) || !w.b.Dialog(p.Fingerprint, false) {
				panic("a look that showed the dialog again did not count")
			}
			w.clock.Advance(DialogGone / 2).MustWait(context.Background())
			if !w.b.Dialog(p.Fingerprint, false) {
				panic("ended although the dialog showed within DialogGone")
			}
			w.clock.Advance(DialogGone / 2).MustWait(context.Background())
			if w.b.Dialog(p.Fingerprint, false) {
				panic("gone for DialogGone and still open")
			}
		},
		// Nobody decided: AKK answers nothing before Claude Code's timer.
		"hold ends": func(w *world, _ context.CancelFunc, _ Prompt) {
			w.clock.Advance(DefaultHold).MustWait(context.Background())
		},
	}
	for name, end := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			trap := w.clock.Trap().NewTimer("claudehook", "hold")
			got := w.postAsync(ctx, permission("s-listed", "touch x"))
			trap.MustWait(ctx).MustRelease(ctx)
			trap.Close()
			p := w.waitOpen(t)
			if !w.b.Dialog(p.Fingerprint, false) {
				t.Fatal("a request was ended before its dialog was drawn")
			}
			end(w, cancel, p)
			r := <-got
			if name != "client gone" && (r.code != 200 || r.body != "{}") {
				t.Fatalf("answer %+v", r)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				if _, ok := w.b.Open("term_a", "s-listed"); !ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("still open")
				}
				time.Sleep(time.Millisecond)
			}
			if err := w.b.Decide(context.Background(), p.Fingerprint, Allow); !errors.Is(err, ErrGone) {
				t.Fatalf("a decision after it ended: %v", err)
			}
		})
	}
}

// A PostToolUse of another command leaves the request open.
func TestOtherToolUseLeavesTheRequestOpen(t *testing.T) {
	w := newWorld(t)
	got := w.postAsync(context.Background(), permission("s-listed", "touch x"))
	p := w.waitOpen(t)
	w.post(context.Background(), w.token, `{"hook_event_name":"PostToolUse","session_id":"s-listed","tool_name":"Bash","tool_input":{"command":"ls"}}`)
	w.post(context.Background(), w.token, `{"hook_event_name":"Stop","session_id":"s-other"}`)
	if err := w.b.Decide(context.Background(), p.Fingerprint, Allow); err != nil {
		t.Fatal(err)
	}
	if r := <-got; !strings.Contains(r.body, `"allow"`) {
		t.Fatalf("answer %+v", r)
	}
}
