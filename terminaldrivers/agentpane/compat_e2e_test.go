package agentpane

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
)

// TestE2EUnknownVersion runs the newest pinned version of each agent with
// its own profile removed from the registry, as a newer release than AKK
// knows would run: it is listed with a compatibility warning and read with
// the nearest lower profile, a request sent to it completes, and its
// permission prompt is shown but never answerable.
func TestE2EUnknownVersion(t *testing.T) {
	newest := map[string]agenttest.Agent{}
	for _, a := range agenttest.RequireAgents(t) {
		if b, ok := newest[a.Kind]; !ok || newer(a.Version, b.Version) {
			newest[a.Kind] = a
		}
	}
	for _, kind := range []string{agenttest.KindClaude, agenttest.KindCodex} {
		a := newest[kind]
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			var kept []agent.Profile
			for _, p := range append((claude.Driver{}).Profiles(), (codex.Driver{}).Profiles()...) {
				if string(p.Agent().Kind) != a.Kind || p.Agent().Version != a.Version {
					kept = append(kept, p)
				}
			}
			reg, err := agent.NewRegistry(kept...)
			if err != nil {
				t.Fatal(err)
			}
			e, x, term := startPane(t, a, reg)
			borrowed, exact, _ := reg.Resolve(term.Agent.Kind, a.Version)
			if exact || !term.Agent.Compatibility || term.Agent.Version != a.Version || term.Agent.Profile != borrowed.Agent().Profile {
				t.Fatalf("agent %+v, want version %s read with %s", term.Agent, a.Version, borrowed.Agent().Profile)
			}
			if !slices.ContainsFunc(term.Warnings, func(w string) bool { return strings.HasPrefix(w, "compatibility: ") }) {
				t.Fatalf("no compatibility warning: %q", term.Warnings)
			}

			r := &run{t: t, e: e, x: x, id: term.ID}
			stepPlain(r)

			// A permission prompt on it is shown, never answerable.
			ap := r.x
			e.Submit("Run this command please " + fakemodel.Marker(fakemodel.ScenarioBash, "cmd", "touch akk-compat && echo akk-compat"))
			deadline := time.Now().Add(agenttest.TurnTimeout)
			for {
				cur, err := r.x.Observe(context.Background(), r.id)
				if err != nil {
					t.Fatal(err)
				}
				if cur.ScreenState == domain.ScreenAwaitingApproval {
					p, err := ap.Prompt(context.Background(), cur)
					if err != nil {
						t.Fatal(err)
					}
					if !p.Present || p.Answerable || len(p.Decisions) != 0 || !strings.Contains(p.Reason, "exact agent version") {
						t.Fatalf("prompt on an unknown version: %+v", p)
					}
					if _, err := ap.Answer(context.Background(), cur, p.Fingerprint, domain.ApproveOnce); err == nil {
						t.Fatal("an answer was accepted on an unknown version")
					}
					if !agenttest.ApprovalPrompt(a.Kind, e.Capture()) {
						t.Fatalf("the prompt left after a refused answer:\n%s", e.Capture())
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("no permission prompt seen: %s\n%s", cur.ScreenState, e.Capture())
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// newer reports whether version a comes after b.
func newer(a, b string) bool {
	va, _ := agent.ParseVersion(a)
	vb, _ := agent.ParseVersion(b)
	return vb.Less(va)
}
