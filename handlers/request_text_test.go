package handlers_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/coder/quartz"

	"akk/callbacks"
	"akk/domain"
	"akk/domain/panetest"
	"akk/handlers"
	"akk/persistence/storetest"
)

// countingTerminal counts every look at and key into a terminal; any other
// use of it panics (the handler answers 500).
type countingTerminal struct {
	domain.TurnTerminal
	calls atomic.Int32
}

func (c *countingTerminal) Observe(context.Context, string) (domain.Terminal, error) {
	c.calls.Add(1)
	return domain.Terminal{}, domain.ErrTerminalGone
}

func (c *countingTerminal) Submit(context.Context, domain.Terminal, string) (domain.SubmitStage, error) {
	c.calls.Add(1)
	return domain.SubmitNothing, nil
}

// A request holding a zero-width or bidirectional control is refused with
// 422 before the terminal is looked at: nothing typed, no Turn recorded.
func TestInvisibleControlsInARequestAreRefused(t *testing.T) {
	store, err := storetest.OpenLocation(context.Background(), storetest.NewLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := domain.NewService(store, quartz.NewReal(), &fixedIDs{}, handlers.NewValidator())
	if err := svc.UseOperatorToken(context.Background(), "op-token"); err != nil {
		t.Fatal(err)
	}
	term := &countingTerminal{}
	panetest.Use(svc, panetest.Of(term), nil, domain.TurnConfig{})
	h, err := handlers.New(handlers.Deps{Service: svc, Hub: callbacks.NewHub(), Metrics: handlers.NewMetrics(), Version: "test",
		AllowedHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{h: h, operator: "op-token"}
	for _, req := range []string{"\u200b/clear", "fix\u200dit", "run \u202egnp.exe", "\u2066x\u2069", "\ufeffhello"} {
		body, _ := json.Marshal(map[string]string{"terminal_id": "term_aaaaaaaaaa", "request": req})
		w := e.do("POST", "/v1/turns", e.operator, string(body))
		if w.Code != 422 || problemCode(t, w) != "validation_failed" {
			t.Fatalf("%q: %d %s", req, w.Code, w.Body)
		}
	}
	if n := term.calls.Load(); n != 0 {
		t.Fatalf("the terminal was used %d times", n)
	}
	w := e.do("GET", "/v1/turns", e.operator, "")
	var list struct{ Turns []any }
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || w.Code != 200 || len(list.Turns) != 0 {
		t.Fatalf("turns after refusals: %d %s", w.Code, w.Body)
	}
}
