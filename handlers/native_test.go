package handlers_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"akk/domain"
	"akk/domain/panetest"
)

// fakePane is one idle agent pane whose native controls count every plan
// that could have pressed a key.
type fakePane struct {
	mu    sync.Mutex
	plans int
	// readStage is how a permissions read ends (verified when empty).
	readStage domain.AnswerStage
}

func (p *fakePane) count() int { p.mu.Lock(); defer p.mu.Unlock(); return p.plans }
func (p *fakePane) plan() domain.AnswerStage {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.plans++
	return domain.AnswerVerified
}

func (p *fakePane) terminal() domain.Terminal {
	return domain.Terminal{ID: "term_a", Project: "/src/app", Agent: domain.Agent{Kind: domain.AgentCodex, Version: "0.171.0", Profile: "codex-0.171.0"},
		ScreenState: domain.ScreenIdle, ComposerEmpty: true, NativeIdentity: domain.IdentityResolved, NativeThreadID: "t1"}
}
func (p *fakePane) Discover(context.Context) ([]domain.Terminal, error) {
	return []domain.Terminal{p.terminal()}, nil
}
func (p *fakePane) Diagnose(context.Context) (domain.TerminalDiagnosis, error) {
	return domain.TerminalDiagnosis{}, nil
}
func (p *fakePane) Observe(_ context.Context, id string) (domain.Terminal, error) {
	if id != "term_a" {
		return domain.Terminal{}, domain.ErrTerminalGone
	}
	return p.terminal(), nil
}
func (p *fakePane) Mark(context.Context, domain.Terminal) (domain.DurableMark, error) {
	return "0", nil
}
func (p *fakePane) Submit(context.Context, domain.Terminal, string) (domain.SubmitStage, error) {
	p.plan()
	return domain.SubmitEntered, nil
}
func (p *fakePane) Interrupt(context.Context, domain.Terminal) error { p.plan(); return nil }
func (p *fakePane) Progress(_ context.Context, _ domain.Terminal, m domain.DurableMark, _ string) (domain.TurnProgress, error) {
	return domain.TurnProgress{Mark: m}, nil
}
func (p *fakePane) StatusCard(context.Context, domain.Terminal) (domain.NativeStatus, domain.AnswerStage, error) {
	return domain.NativeStatus{NativeThreadID: "t1"}, p.plan(), nil
}
func (p *fakePane) WorkingStatusCard(ctx context.Context, t domain.Terminal) (domain.NativeStatus, domain.AnswerStage, error) {
	return p.StatusCard(ctx, t)
}
func (p *fakePane) NewThread(context.Context, domain.Terminal) (domain.AnswerStage, error) {
	return p.plan(), nil
}
func (p *fakePane) ResumeThread(context.Context, domain.Terminal, string) (domain.AnswerStage, error) {
	return p.plan(), nil
}
func (p *fakePane) Models(context.Context, domain.Terminal) (domain.ModelState, domain.AnswerStage, error) {
	return domain.ModelState{Model: "m", Effort: "medium", Scope: "current_session",
		Models: []domain.ModelOption{{Model: "m", Label: "M", Efforts: []string{"medium"}}}}, p.plan(), nil
}
func (p *fakePane) SetModel(_ context.Context, _ domain.Terminal, model, effort string) (domain.ModelState, domain.AnswerStage, error) {
	return domain.ModelState{Model: model, Effort: effort, Scope: "current_session"}, p.plan(), nil
}
func (p *fakePane) Permissions(context.Context, domain.Terminal) (domain.PermissionState, domain.AnswerStage, error) {
	stage := p.plan()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.readStage != "" {
		stage = p.readStage
	}
	return domain.PermissionState{Current: "auto", Modes: []domain.PermissionMode{{Mode: "auto", Label: "Auto"}, {Mode: "read_only", Label: "Read Only"}}}, stage, nil
}
func (p *fakePane) SetPermissions(_ context.Context, _ domain.Terminal, mode string) (domain.PermissionState, domain.AnswerStage, error) {
	return domain.PermissionState{Current: mode}, p.plan(), nil
}

// nativePanes is a pane transport with p's model and permission controls.
type nativePanes struct {
	panetest.Panes
	*fakePane
}

func paneEnv(t *testing.T) (*env, *fakePane) {
	p := &fakePane{}
	e := newEnvOpts(t, envOpts{wire: func(svc *domain.Service) {
		svc.UseTerminals(p)
		panetest.Use(svc, nativePanes{panetest.Of(p).With(p), p}, nil, domain.TurnConfig{})
	}})
	return e, p
}

// A read that may press keys in a pane (the models and permissions
// reads open and close the agent's menu) needs the dashboard's
// same-origin proof from a cookie, as a mutation does; a bearer token
// needs none.
func TestCookieReadsThatTypeNeedTheSameOriginProof(t *testing.T) {
	e, p := paneEnv(t)
	cookie := e.uiSignIn(t, e.operator).String()
	for _, path := range []string{"/v1/terminals/term_a/models", "/v1/terminals/term_a/permissions"} {
		for _, h := range [][]string{
			{"Cookie", cookie},
			{"Cookie", cookie, "Sec-Fetch-Site", "cross-site"},
			{"Cookie", cookie, "Origin", "http://example.com:8080"}, // a served host, another origin
		} {
			w := e.do("GET", path, "", "", h...)
			if w.Code != 403 || problemCode(t, w) != "csrf_rejected" {
				t.Fatalf("GET %s with %v: %d %s", path, h[2:], w.Code, w.Body)
			}
		}
		if p.count() != 0 {
			t.Fatalf("GET %s without the proof ran %d plans", path, p.count())
		}
		before := p.count()
		if w := e.do("GET", path, "", "", "Cookie", cookie, "Sec-Fetch-Site", "same-origin"); w.Code != 200 {
			t.Fatalf("GET %s from the dashboard's page: %d %s", path, w.Code, w.Body)
		}
		if w := e.do("GET", path, e.operator, ""); w.Code != 200 {
			t.Fatalf("GET %s with the bearer token: %d %s", path, w.Code, w.Body)
		}
		if p.count() != before+2 {
			t.Fatalf("GET %s with the proof and with a token ran %d plans, want 2", path, p.count()-before)
		}
		p.mu.Lock()
		p.plans = 0
		p.mu.Unlock()
	}
}

// A permissions read (Codex opens and closes its menu) or a change whose
// read ends unproven is uncertain, do not retry, and is announced on the
// pane as terminal.native_uncertain naming what was asked: a menu may be
// left open in the person's pane.
func TestUnprovenPermissionsReadIsAnnounced(t *testing.T) {
	e, p := paneEnv(t)
	p.mu.Lock()
	p.readStage = domain.AnswerSent
	p.mu.Unlock()
	for _, c := range []struct{ method, path, body, action string }{
		{"GET", "/v1/terminals/term_a/permissions", "", "permission_options"},
		{"PUT", "/v1/terminals/term_a/permissions", `{"mode":"read_only"}`, "set_permissions"},
	} {
		w := e.do(c.method, c.path, e.operator, c.body)
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"outcome":"uncertain"`) || !strings.Contains(w.Body.String(), `"do_not_retry":true`) {
			t.Fatalf("%s %s: %d %s", c.method, c.path, w.Code, w.Body)
		}
		evs, err := e.store.EventsAfter(context.Background(), 0, domain.EventFilter{All: true, Subject: "term_a"}, 100)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ev := range evs {
			found = found || (ev.Type == "terminal.native_uncertain" && strings.Contains(string(ev.Data.(json.RawMessage)), `"action":"`+c.action+`"`))
		}
		if !found {
			t.Fatalf("%s %s: no terminal.native_uncertain for %s in %d events", c.method, c.path, c.action, len(evs))
		}
	}
}
