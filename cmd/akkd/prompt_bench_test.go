package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/screen"
)

// BenchmarkE2EPromptLatency measures, on every pinned version, how soon a
// permission prompt or a questionnaire step drawn in the pane reaches the
// API: from the first capture (the benchmark's own, a few milliseconds
// apart) that the version's profile reads as awaiting approval (or an
// answer), to the turn.approval_required (turn.interaction_required)
// webhook arriving. Each prompt is then approved once (the command touches
// a file), each question answered with its first option (Codex asks in
// Plan mode, switched to after the prompts).
// Run it with a fixed count, e.g. -benchtime=5x; it reports the median and
// the largest in milliseconds of each.
func BenchmarkE2EPromptLatency(b *testing.B) {
	reg, err := agent.RegistryOf([]agent.Driver{claude.Driver{}, codex.Driver{}})
	if err != nil {
		b.Fatal(err)
	}
	for _, a := range agenttest.RequireAgents(b) {
		b.Run(a.Name(), func(b *testing.B) {
			prof, _, ok := reg.Resolve(domain.AgentKind(a.Kind), a.Version)
			if !ok {
				b.Fatalf("no profile for %s", a.Name())
			}
			e := agenttest.New(b, a, agenttest.Options{})
			e.StartReady()
			rec := newReceiver(b, "")
			d := startDaemon(b, b.TempDir(), map[string]string{"AKK_TMUX_SOCKETS": e.SocketPath()})
			defer d.stop()
			var host hostCreds
			call(b, "POST", d.url+"/v1/hosts", d.token, `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			term := findRow(b, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend).Terminal.TerminalID
			// probe sends req, waits for the screen the version's profile reads
			// as state, then for the webhook typ: the Turn and the time from
			// that screen to the webhook.
			probe := func(req string, state domain.ScreenState, typ string) (string, time.Duration) {
				b.Helper()
				var s sendAnswer
				if code := call(b, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+req+`"}`, &s); code != 202 {
					b.Fatalf("send: %d %+v", code, s)
				}
				var drawn time.Time
				for deadline := time.Now().Add(60 * time.Second); drawn.IsZero(); {
					if prof.Classify(screen.Parse(e.CaptureANSI())).State == state {
						drawn = time.Now()
					} else if time.Now().After(deadline) {
						b.Fatalf("%q: no %s screen", req, state)
					}
				}
				rec.waitTurn(b, s.TurnID, typ, 30*time.Second)
				got, _ := rec.arrival(s.TurnID, typ)
				return s.TurnID, got.Sub(drawn)
			}
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id, l := probe(fmt.Sprintf(`[[akk:bash cmd=\"touch akk-prompt-%d\"]] prompt probe %d`, i, i), domain.ScreenAwaitingApproval, "turn.approval_required")
				lat = append(lat, l)
				call(b, "GET", d.url+"/v1/turns/"+id, host.Token, "", nil) // the offer
				var res map[string]any
				if code := call(b, "POST", d.url+"/v1/turns/"+id+"/approval", host.Token, `{"decision":"approve_once"}`, &res); code != 200 {
					b.Fatalf("approve: %d %v", code, res)
				}
				rec.waitTurn(b, id, "turn.completed", 60*time.Second)
				findRow(b, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			}
			if a.Kind == agenttest.KindCodex {
				e.PlanMode()
			}
			var qlat []time.Duration
			for i := 0; i < b.N; i++ {
				id, l := probe(fmt.Sprintf(`[[akk:ask questions=1]] question probe %d`, i), domain.ScreenAwaitingInteraction, "turn.interaction_required")
				qlat = append(qlat, l)
				b.Logf("question %d: %s", i, l)
				var p projection
				for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
					p = projection{}
					code := call(b, "GET", d.url+"/v1/turns/"+id+"/interaction", host.Token, "", &p)
					if code == 200 && len(p.Questions) == 1 {
						break
					}
					if code != 409 || time.Now().After(deadline) {
						b.Fatalf("question %d: the step read %d", i, code)
					}
				}
				var res map[string]any
				if code := call(b, "POST", d.url+"/v1/turns/"+id+"/interaction", host.Token, answerBody(p, 0, ""), &res); code != 200 {
					b.Fatalf("answer: %d %v", code, res)
				}
				rec.waitTurn(b, id, "turn.completed", 60*time.Second)
				findRow(b, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			}
			b.StopTimer()
			slices.Sort(lat)
			slices.Sort(qlat)
			b.ReportMetric(ms(lat[len(lat)/2]), "median-ms")
			b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
			b.ReportMetric(ms(qlat[len(qlat)/2]), "question-median-ms")
			b.ReportMetric(ms(qlat[len(qlat)-1]), "question-max-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
