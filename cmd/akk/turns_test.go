package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/domain"
	"akk/domain/panetest"
)

// pane is a scripted agent terminal: idle until a request is submitted,
// then its record shows the request accepted and answered.
type pane struct {
	mu      sync.Mutex
	sent    []string
	working bool
	since   time.Time // the submit: for 1.5 s the record shows progress only
	ask     bool      // a submit brings a permission prompt, answered by Answer
	asking  bool
	project string // default /src/app
	warn    []string
}

func (p *pane) terminal() domain.Terminal {
	st := domain.ScreenIdle
	if p.working {
		st = domain.ScreenWorking
	}
	if p.asking {
		st = domain.ScreenAwaitingApproval
	}
	project := "/src/app"
	if p.project != "" {
		project = p.project
	}
	return domain.Terminal{ID: "term_cli", Project: project, Warnings: p.warn, Agent: domain.Agent{Kind: domain.AgentClaude, Version: "2.1.328", Profile: "claude-2.1.328"},
		ScreenState: st, ComposerEmpty: true, NativeIdentity: domain.IdentityResolved, NativeThreadID: "t1"}
}

func (p *pane) Discover(context.Context) ([]domain.Terminal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return []domain.Terminal{p.terminal()}, nil
}
func (p *pane) Diagnose(context.Context) (domain.TerminalDiagnosis, error) {
	return domain.TerminalDiagnosis{Tmux: domain.TmuxStatus{Found: true, Version: "3.3a"}}, nil
}
func (p *pane) Observe(_ context.Context, id string) (domain.Terminal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id != "term_cli" {
		return domain.Terminal{}, domain.ErrTerminalGone
	}
	return p.terminal(), nil
}
func (p *pane) Mark(context.Context, domain.Terminal) (domain.DurableMark, error) { return "0", nil }
func (p *pane) Submit(_ context.Context, _ domain.Terminal, text string) (domain.SubmitStage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent, p.working, p.since, p.asking = append(p.sent, text), true, time.Now(), p.ask
	return domain.SubmitEntered, nil
}

// Prompt and Answer are the pane's permission prompt (domain.ApprovalTerminal).
func (p *pane) Prompt(context.Context, domain.Terminal) (domain.ApprovalPrompt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.asking {
		return domain.ApprovalPrompt{}, nil
	}
	return domain.ApprovalPrompt{Present: true, Answerable: true, Kind: "shell_command", Tool: "Bash", CommandExcerpt: "touch notes.txt",
		Decisions: []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject}, Fingerprint: "fp-1"}, nil
}
func (p *pane) Answer(_ context.Context, _ domain.Terminal, fp string, _ domain.ApprovalDecision) (domain.AnswerStage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.asking || fp != "fp-1" {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	p.asking, p.since = false, time.Time{}
	return domain.AnswerVerified, nil
}
func (p *pane) Interrupt(context.Context, domain.Terminal) error { return nil }
func (p *pane) Progress(_ context.Context, _ domain.Terminal, m domain.DurableMark, req string) (domain.TurnProgress, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Like the real record, the mark carries what is proven so far.
	if p.working && m == "0" {
		if p.asking || time.Since(p.since) < 1500*time.Millisecond {
			return domain.TurnProgress{Mark: "0", Accepted: true, LatestText: "halfway there",
				Actions: []domain.ProgressAction{{Type: "Bash", Status: "completed"}}}, nil
		}
	}
	if p.working || m == "done" {
		p.working = false
		return domain.TurnProgress{Mark: "done", Accepted: true, Completed: true, FinalMessage: "Done: " + req}, nil
	}
	return domain.TurnProgress{Mark: m}, nil
}

func TestCLISendWaitStatusTurns(t *testing.T) {
	p := &pane{}
	url, dir := cliServer(t, func(svc *domain.Service) {
		svc.UseTerminals(p)
		panetest.Use(svc, panetest.Of(p), nil, domain.TurnConfig{PollInterval: 5 * time.Millisecond, ScreenInterval: 10 * time.Millisecond})
	})

	out, err := akk(t, context.Background(), url, dir, "list")
	if err != nil || !strings.Contains(out, "/src/app") || !strings.Contains(out, "send") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	out, err = akk(t, wctx, url, dir, "send", "--wait", "term_cli", "fix", "the", "bug")
	if err != nil || !strings.Contains(out, "turn.completed") || !strings.Contains(out, "Done: fix the bug") ||
		!strings.Contains(out, "progress\t[Bash completed] halfway there") || !strings.Contains(out, "managed") {
		t.Fatalf("send --wait: %v\n%s", err, out)
	}
	if len(p.sent) != 1 || p.sent[0] != "fix the bug" {
		t.Fatalf("sent %q", p.sent)
	}
	id := strings.Fields(strings.SplitN(out, ":", 2)[0])[1]
	out, err = akk(t, context.Background(), url, dir, "status", id)
	if err != nil || !strings.Contains(out, "completed") || !strings.Contains(out, "Done: fix the bug") {
		t.Fatalf("status: %v\n%s", err, out)
	}
	out, err = akk(t, context.Background(), url, dir, "turns", "--state", "completed")
	if err != nil || !strings.Contains(out, id) {
		t.Fatalf("turns: %v\n%s", err, out)
	}
	// What list prints can be sent to: its conversation id (read here
	// with --json after the command).
	out, err = akk(t, context.Background(), url, dir, "list", "--json")
	var l struct {
		Conversations []struct {
			ConversationID string `json:"conversation_id"`
		} `json:"conversations"`
	}
	if err != nil || json.Unmarshal([]byte(out), &l) != nil || len(l.Conversations) != 1 || !strings.HasPrefix(l.Conversations[0].ConversationID, "conv_") {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	wctx2, wcancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel2()
	if out, err = akk(t, wctx2, url, dir, "send", "--wait", l.Conversations[0].ConversationID, "the", "next", "one"); err != nil ||
		!strings.Contains(out, "Done: the next one") {
		t.Fatalf("send to the conversation id: %v\n%s", err, out)
	}
	if _, err = akk(t, context.Background(), url, dir, "send", "conv_nope", "x"); exitCode(err) != exitNotFound || !strings.Contains(err.Error(), "akk list") {
		t.Fatalf("send to an unknown conversation: %v (exit %d)", err, exitCode(err))
	}
	if len(p.sent) != 2 || p.sent[1] != "the next one" {
		t.Fatalf("sent %q", p.sent)
	}
	if _, err = akk(t, context.Background(), url, dir, "send", "term_cli", "/clear"); err == nil || !strings.Contains(err.Error(), "slash_command_rejected") {
		t.Fatalf("a slash command was sent: %v", err)
	}
	// A conversation goes where its row's send action says; one no row
	// lists (this service has no Codex backend) is not found, nothing sent.
	if _, err = akk(t, context.Background(), url, dir, "send", "conv_cx_0000", "hello"); exitCode(err) != exitNotFound || !strings.Contains(err.Error(), "akk list") {
		t.Fatalf("send to a backend conversation no row lists: %v", err)
	}
	if _, err = akk(t, context.Background(), url, dir, "cancel", id); err == nil || !strings.Contains(err.Error(), "turn_state_conflict") || exitCode(err) != exitRefused {
		t.Fatalf("cancel a completed turn: %v (exit %d)", err, exitCode(err))
	}
	// The recovery and interaction commands reach their routes.
	watchID := ""
	for _, l := range strings.Split(out0(t, url, dir, "status", id), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "watch:" {
			watchID = f[1]
		}
	}
	// A person's view by default (field: value), the JSON with --json.
	if out, err := akk(t, context.Background(), url, dir, "watch-status", watchID); watchID == "" || err != nil ||
		!regexp.MustCompile(`(?m)^state: +completed$`).MatchString(out) || strings.Contains(out, "{") {
		t.Fatalf("watch-status %q: %v\n%s", watchID, err, out)
	}
	if out, err := akk(t, context.Background(), url, dir, "watch-status", watchID, "--json"); err != nil || !strings.Contains(out, `"state": "completed"`) {
		t.Fatalf("watch-status --json: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"retry-callback", id}, "notification_not_found"},
		{[]string{"retry-callback", watchID, "msg_none"}, "notification_not_found"},
		{[]string{"watch-renew", watchID}, "turn_state_conflict"},
		{[]string{"watch-recover", "watch_none"}, "watch_not_found"},
		// A completed Turn shows no questionnaire: the routes answer so.
		{[]string{"interaction", id}, "no_interaction"},
		{[]string{"respond-interaction", id, "--interaction", "int_x", "--answer", "q=o"}, "no_interaction"},
	} {
		if _, err := akk(t, context.Background(), url, dir, c.args...); err == nil || !strings.Contains(err.Error(), c.code) {
			t.Errorf("akk %v: %v, want %s", c.args, err, c.code)
		}
	}
}

func out0(t *testing.T, url, dir string, args ...string) string {
	t.Helper()
	out, err := akk(t, context.Background(), url, dir, args...)
	if err != nil {
		t.Fatalf("akk %v: %v", args, err)
	}
	return out
}

// akk status shows the command a Turn waits on and how to answer it;
// akk approve answers it with a line, not JSON.
func TestCLIStatusShowsTheWaitingCommand(t *testing.T) {
	p := &pane{ask: true}
	url, dir := cliServer(t, func(svc *domain.Service) {
		svc.UseTerminals(p)
		panetest.Use(svc, panetest.Of(p).With(p), nil, domain.TurnConfig{PollInterval: 5 * time.Millisecond, ScreenInterval: 10 * time.Millisecond})
	})

	out := out0(t, url, dir, "send", "term_cli", "make", "notes")
	id := strings.Fields(strings.SplitN(out, ":", 2)[0])[1]
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out, "approval:") {
		if time.Now().After(deadline) {
			t.Fatalf("no approval in the status:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
		out = out0(t, url, dir, "status", id)
	}
	for _, want := range []string{"approval: shell_command (Bash)", "command:  touch notes.txt", "answer:   akk approve " + id + " approve_once|reject"} {
		if !strings.Contains(out, want) {
			t.Fatalf("status does not say %q:\n%s", want, out)
		}
	}
	if out = out0(t, url, dir, "approve", id, "approve_once"); !strings.HasPrefix(out, "approve_once: done (turn "+id) || strings.Contains(out, "{") {
		t.Fatalf("approve: %q", out)
	}
}

// akk list fits 100 columns, the conversation id whole; --wide shows all.
func TestCLIListFitsAHundredColumns(t *testing.T) {
	long := "/home/someone/work/a project with spaces/and a rather deep/folder/of/its/own"
	p := &pane{project: long, warn: []string{"an unusually long warning about something the operator should know of"}}
	url, dir := cliServer(t, func(svc *domain.Service) {
		svc.UseTerminals(p)
		panetest.Use(svc, panetest.Of(p), nil, domain.TurnConfig{PollInterval: 5 * time.Millisecond, ScreenInterval: 10 * time.Millisecond})
	})
	out := out0(t, url, dir, "list")
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if n := len([]rune(l)); n > 100 {
			t.Fatalf("a row of %d columns:\n%s", n, out)
		}
	}
	js := out0(t, url, dir, "list", "--json")
	var l struct {
		Conversations []struct {
			ConversationID string `json:"conversation_id"`
		} `json:"conversations"`
	}
	if json.Unmarshal([]byte(js), &l) != nil || len(l.Conversations) != 1 || !strings.Contains(out, l.Conversations[0].ConversationID) || !strings.Contains(out, "…") {
		t.Fatalf("the id whole, the rest cut:\n%s", out)
	}
	if wide := out0(t, url, dir, "list", "--wide"); !strings.Contains(wide, long) || !strings.Contains(wide, p.warn[0]) {
		t.Fatalf("--wide:\n%s", wide)
	}
}
