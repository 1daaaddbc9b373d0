package agenttest

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest/fakemodel"
)

// TestE2EHarness drives every pinned agent version through what AKK must see:
// idle, a plain reply (screen and transcript/rollout), a permission prompt, a
// questionnaire and an Esc interrupt. One agent start per version; the steps
// run in sequence in its pane, and the versions run in parallel.
func TestE2EHarness(t *testing.T) {
	for _, a := range RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			e := New(t, a, Options{})
			if !t.Run("idle", func(t *testing.T) {
				e.WithT(t).StartReady()
				t.Logf("%s ready after %s", a.Name(), time.Since(start).Round(time.Millisecond))
				// The screen is read through the Env's control client, not a
				// tmux process per read, and reads as a process reads it.
				e.reader.mu.Lock()
				ctl := e.reader.ctl
				e.reader.mu.Unlock()
				if ctl == nil {
					t.Fatal("the screen was not read through a control client")
				}
				full := append([]string{"-L", e.SocketName}, "display-message", "-p", "-t", e.Target(), "#{pane_pid} #{pane_width}x#{pane_height}")
				cmd := exec.Command("tmux", full...)
				cmd.Env = e.tmuxEnv
				want, err := cmd.Output()
				if got := e.mustTmux(full[2:]...); err != nil || got != string(want) {
					t.Fatalf("through the control client %q, as a process %q (%v)", got, want, err)
				}
			}) {
				return
			}
			steps := []struct {
				name string
				run  func(t *testing.T, e *Env)
			}{
				{"plain_reply", stepPlainReply},
				{"permission_prompt", stepPermissionPrompt},
				{"multi_step", stepMultiStep},
				{"questionnaire", stepQuestionnaire},
				{"esc_interrupt", stepEscInterrupt},
			}
			for _, s := range steps {
				ok := t.Run(s.name, func(t *testing.T) {
					s.run(t, e.WithT(t))
				})
				if !ok {
					return // the pane's state is unknown; later steps would only add noise
				}
			}
			t.Logf("%s: all steps in %s", a.Name(), time.Since(start).Round(time.Millisecond))
		})
	}
}

func stepPlainReply(t *testing.T, e *Env) {
	// Long enough to wrap in the composer of a 120-column pane.
	prompt := "Say hello to the harness, and take this long sentence along so that the composer has to wrap it over more than one line of the pane"
	token := fakemodel.ReplyToken(prompt)
	e.Submit(prompt)
	e.WaitForText(TurnTimeout, token)
	e.WaitTurnCompleted(token, TurnTimeout)
	e.WaitIdle(TurnTimeout)
	req := lastScenarioRequest(t, e)
	if req.Scenario != fakemodel.ScenarioReply || req.UserText != prompt {
		t.Errorf("fake model saw scenario %q user text %q, want reply to %q", req.Scenario, req.UserText, prompt)
	}
}

func stepPermissionPrompt(t *testing.T, e *Env) {
	e.Submit("Run the probe command " + fakemodel.Marker(fakemodel.ScenarioBash))
	e.WaitFor("the shell command approval prompt", TurnTimeout, func(s string) bool {
		return ApprovalPrompt(e.Agent.Kind, s) && strings.Contains(s, "akk-approval-probe")
	})
	e.Settle()
	e.Press("Enter") // option 1: Yes
	e.WaitTurnCompleted("akk-bash-ran", TurnTimeout)
	e.WaitIdle(TurnTimeout)
}

// stepMultiStep runs a task of three shell calls in sequence, approving any
// call the agent asks about (Claude Code runs a plain echo without asking;
// Codex asks when its sandbox cannot run it).
func stepMultiStep(t *testing.T, e *Env) {
	e.Submit("Do three steps " + fakemodel.Marker(fakemodel.ScenarioSteps, "n", "3"))
	deadline := time.Now().Add(TurnTimeout)
	for !TurnCompleted(e.Agent.Kind, e.Transcript(), "akk-step-3") {
		if time.Now().After(deadline) {
			e.WaitTurnCompleted("akk-step-3", 0) // fails with the transcript and screen
		}
		if ApprovalPrompt(e.Agent.Kind, e.Capture()) {
			e.Settle()
			e.Press("Enter")
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.WaitIdle(TurnTimeout)
	var results []int
	for _, r := range e.Requests() {
		if r.Scenario == fakemodel.ScenarioSteps {
			results = append(results, len(r.ToolResults))
		}
	}
	if len(results) != 4 || results[3] != 3 {
		t.Errorf("steps requests saw %v tool results, want 0,1,2,3", results)
	}
}

func stepQuestionnaire(t *testing.T, e *Env) {
	if e.Agent.Kind == KindCodex {
		// request_user_input is offered in Plan mode only.
		e.PlanMode()
	}
	e.Submit("Ask me first " + fakemodel.Marker(fakemodel.ScenarioAsk))
	e.WaitFor("the questionnaire", TurnTimeout, func(s string) bool {
		return Questionnaire(e.Agent.Kind, s) && strings.Contains(s, fakemodel.Questions[0].Question)
	})
	e.Settle()
	e.Press("Enter") // option 1: Red
	e.WaitTurnCompleted("Red", TurnTimeout)
	e.WaitIdle(TurnTimeout)
	if e.Agent.Kind == KindCodex {
		e.DefaultMode() // back to Default mode
	}
}

func stepEscInterrupt(t *testing.T, e *Env) {
	e.Submit("Take your time " + fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "60"))
	e.WaitModelRequest("the slow request", TurnTimeout, func(r fakemodel.Request) bool { return r.Scenario == fakemodel.ScenarioSlow })
	// The turn is under way: the working indicator, or the first word of the
	// answer (Codex 0.169.0 hides its indicator once answer text streams;
	// Claude Code and Codex 0.155.1 show the text only later).
	e.WaitFor("the turn under way", TurnTimeout, func(s string) bool {
		return strings.Contains(s, "esc to interrupt") || strings.Contains(s, "slow-1")
	})
	time.Sleep(500 * time.Millisecond)
	pressed := time.Now()
	e.Press("Escape")
	e.WaitFor("the interrupted turn and the idle composer", TurnTimeout, func(s string) bool {
		return e.Idle(s) && strings.Contains(s, "nterrupted")
	})
	t.Logf("idle %s after Esc", time.Since(pressed).Round(time.Millisecond))
	req := e.WaitModelRequest("the end of the slow reply", TurnTimeout, func(r fakemodel.Request) bool {
		return r.Scenario == fakemodel.ScenarioSlow && r.Done()
	})
	if !req.Interrupted {
		t.Errorf("the slow reply was not interrupted: %+v", req)
	}
}

// lastScenarioRequest is the latest request that played a scenario.
func lastScenarioRequest(t *testing.T, e *Env) fakemodel.Request {
	t.Helper()
	reqs := e.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if !reqs[i].Aux {
			return reqs[i]
		}
	}
	t.Fatalf("no scenario request recorded; requests: %+v", reqs)
	return fakemodel.Request{}
}
