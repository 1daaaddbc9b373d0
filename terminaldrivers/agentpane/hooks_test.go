package agentpane

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/quartz"

	"akk/domain"
	"akk/terminaldrivers/agentpane/claudehook"
)

// A dialog still drawn after the hook answered a request is not taken for
// the next request's: the look after it (the old dialog gone, the new one
// not yet drawn) leaves the next request open, where it used to end it as
// answered in the pane (seen with the fake model on a busy machine). The
// next request's own dialog, once drawn and then gone, still ends it.
func TestHookRequestIsNotTakenForTheAnsweredDialog(t *testing.T) {
	clock := quartz.NewMock(t)
	tok := filepath.Join(t.TempDir(), "hook.token")
	if err := os.WriteFile(tok, []byte("akk_hook_secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := claudehook.New(claudehook.Config{TokenFile: tok, Clock: clock,
		Bind: func(context.Context, string, string) (claudehook.Binding, bool) {
			return claudehook.Binding{TerminalID: "term_h"}, true
		}})
	x := newTestAdapter(t, &fakeTmux{}, Config{Clock: clock})
	x.UseClaudeHooks(b)
	term := domain.Terminal{ID: "term_h", Agent: domain.Agent{Kind: domain.AgentClaude, Version: "2.1.999"},
		NativeIdentity: domain.IdentityResolved, NativeThreadID: "s1"}
	look := func(s domain.ScreenState) domain.Terminal {
		t.Helper()
		term.ScreenState = s
		return x.withHook(term)
	}

	// The request before was answered through the hook: its dialog is
	// still drawn while Claude Code's next request opens.
	x.mu.Lock()
	x.answered["term_h"] = hookAnswer{fp: "the request before", until: x.now().Add(answeredLinger)}
	x.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		body := `{"hook_event_name":"PermissionRequest","session_id":"s1","transcript_path":"/x/s1.jsonl","tool_name":"Bash","tool_input":{"command":"make test"}}`
		req := httptest.NewRequestWithContext(ctx, "POST", claudehook.Path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer akk_hook_secret")
		b.ServeHTTP(httptest.NewRecorder(), req)
	}()
	defer func() { cancel(); <-done }()
	var fp string
	for {
		if p, ok := b.Open("term_h", "s1"); ok {
			fp = p.Fingerprint
			break
		}
		select {
		case <-done:
			t.Fatal("the request was answered before it was held")
		default:
		}
	}
	open := func(why string) {
		t.Helper()
		if p, ok := b.Open("term_h", "s1"); !ok || p.Fingerprint != fp {
			t.Fatalf("%s: the request is no longer open", why)
		}
	}

	if got := look(domain.ScreenAwaitingApproval); got.ScreenState != domain.ScreenAwaitingApproval || !got.ExactPrompt {
		t.Fatalf("the answered dialog still drawn: %s, exact %v", got.ScreenState, got.ExactPrompt)
	}
	if got := look(domain.ScreenWorking); got.ScreenState != domain.ScreenAwaitingApproval || !got.ExactPrompt {
		t.Fatalf("the old dialog gone, the new not yet drawn: %s, exact %v", got.ScreenState, got.ExactPrompt)
	}
	open("the old dialog gone, the new not yet drawn")
	look(domain.ScreenAwaitingApproval) // its own dialog
	open("its own dialog drawn")
	if got := look(domain.ScreenWorking); !got.ExactPrompt {
		t.Fatal("its own dialog missing from one look: no longer offered")
	}
	clock.Advance(claudehook.DialogGone).MustWait(context.Background())
	if got := look(domain.ScreenWorking); got.ExactPrompt {
		t.Fatal("its own dialog gone: still offered")
	}
	if _, ok := b.Open("term_h", "s1"); ok {
		t.Fatal("its own dialog gone (the person answered it in the pane): the request is still open")
	}
}
