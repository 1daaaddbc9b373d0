package agenttest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest/fakemodel"
)

// CaptureEnv turns TestCaptureFixtures on.
const CaptureEnv = "AKK_CAPTURE_FIXTURES"

// FixtureProjectDir is the neutral folder the agents run in while fixtures
// are captured, so screens show this path and nothing of the machine.
const FixtureProjectDir = "/tmp/akk-fixture-project"

// Expected screen states in meta.json.
const (
	StateIdle                = "idle"
	StateWorking             = "working"
	StateAwaitingApproval    = "awaiting_approval"
	StateAwaitingInteraction = "awaiting_interaction"
	StateStartupDialog       = "startup_dialog"
	StateUnknown             = "unknown"
)

// FixtureMeta is meta.json of one captured screen.
type FixtureMeta struct {
	Agent         string `json:"agent"`
	Version       string `json:"version"`
	Case          string `json:"case"`
	Width         int    `json:"width"`
	Height        int    `json:"height"`
	ExpectedState string `json:"expected_state"`
	// ComposerEmpty is set (false) for composer_text: idle, but the composer
	// holds unsent text.
	ComposerEmpty *bool  `json:"composer_empty,omitempty"`
	Description   string `json:"description"`
	ProjectDir    string `json:"project_dir"`
}

// TestCaptureFixtures drives every pinned agent version to each screen AKK
// must recognise and writes terminaldrivers/testdata/screens/<kind>/
// <version>/<case>/{screen.txt,screen.ansi,meta.json}. It runs only with
// AKK_CAPTURE_FIXTURES=1 (make fixtures). Versions run one after another:
// they share FixtureProjectDir.
// CaptureAgentEnv names one release (kind@version) to capture instead of
// every pinned one, and CaptureDirEnv the folder its screens go to (make
// profile-new).
const (
	CaptureAgentEnv = "AKK_CAPTURE_AGENT"
	CaptureDirEnv   = "AKK_CAPTURE_DIR"
)

func TestCaptureFixtures(t *testing.T) {
	if os.Getenv(CaptureEnv) != "1" {
		t.Skipf("set %s=1 to recapture the screen fixtures (make fixtures)", CaptureEnv)
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Claim the neutral project path; a second capture at once would share it.
	if err := os.Mkdir(FixtureProjectDir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			t.Fatalf("%s exists: another fixture capture is running, or an old one left it (remove it)", FixtureProjectDir)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(FixtureProjectDir) })
	agents, screens := RequireAgents(t), filepath.Join(root, "terminaldrivers", "testdata", "screens")
	if one := os.Getenv(CaptureAgentEnv); one != "" {
		// make profile-new: one release, into a folder of candidates.
		kind, version, _ := strings.Cut(one, "@")
		agents = []Agent{{Kind: kind, Version: version, Dir: filepath.Join(AgentsDir(), one)}}
		if !agents[0].Installed() {
			t.Fatalf("%s is not installed", one)
		}
		if dir := os.Getenv(CaptureDirEnv); dir != "" {
			screens = dir
		}
	}
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			out := filepath.Join(screens, a.Kind, a.Version)
			c := &capturer{t: t, dir: out, saved: map[string]bool{}}
			switch a.Kind {
			case KindClaude:
				captureClaude(t, a, c)
			case KindCodex:
				captureCodex(t, a, c)
			}
			c.removeStale()
			t.Logf("%s: %d cases in %s", a.Name(), len(c.saved), out)
		})
	}
}

type capturer struct {
	t     *testing.T
	dir   string
	saved map[string]bool
}

// gated cases appear only on some starts (an experiment gate decides); an
// earlier capture of one is kept when this run did not meet it.
var gated = map[string]bool{"startup_auto_mode": true}

// removeStale removes the cases of an earlier capture that this run did not
// write, so the folder holds exactly this run's cases (and gated ones).
func (c *capturer) removeStale() {
	entries, _ := os.ReadDir(c.dir)
	for _, ent := range entries {
		if !ent.IsDir() || c.saved[ent.Name()] {
			continue
		}
		if gated[ent.Name()] {
			c.t.Logf("kept the earlier capture of %s (not shown this time)", ent.Name())
			continue
		}
		if err := os.RemoveAll(filepath.Join(c.dir, ent.Name())); err != nil {
			c.t.Error(err)
		}
	}
}

// save writes the pane as one case.
func (c *capturer) save(e *Env, name, state, description string, composerEmpty *bool) {
	c.t.Helper()
	txt, ansi := e.Capture(), e.CaptureANSI()
	dir := filepath.Join(c.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	meta := FixtureMeta{Agent: e.Agent.Kind, Version: e.Agent.Version, Case: name, Width: e.Width, Height: e.Height,
		ExpectedState: state, ComposerEmpty: composerEmpty, Description: description, ProjectDir: e.ProjectDir}
	data, _ := json.MarshalIndent(meta, "", "  ")
	for file, body := range map[string]string{"screen.txt": txt, "screen.ansi": ansi, "meta.json": string(data) + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.saved[name] = true
}

func fixtureEnv(t *testing.T, a Agent, opts Options) *Env {
	opts.ProjectDir = FixtureProjectDir
	return New(t, a, opts)
}

var notEmpty = new(bool) // composer_empty: false

const captureTimeout = 45 * time.Second

func captureClaude(t *testing.T, a Agent, c *capturer) {
	// Start-up dialogs first, in a home that has not trusted the folder and
	// has not seen the start-up offers.
	t.Run("startup", func(t *testing.T) {
		e := fixtureEnv(t, a, Options{Untrusted: true, ShowOffers: true, UnapprovedKey: true}).WithT(t)
		e.Start()
		answers := map[string]string{
			DialogTrust:    "Yes, I trust this folder", // 2.1.328 preselects "No, exit"
			DialogAPIKey:   "Yes",
			DialogAutoMode: "No, keep manual mode",
		}
		cases := map[string]struct{ name, description string }{
			DialogTrust:    {"startup_trust", "first start in an untrusted folder: the trust dialog"},
			DialogAPIKey:   {"startup_api_key", "an ANTHROPIC_API_KEY not approved yet: \"Do you want to use this API key?\""},
			DialogAutoMode: {"startup_auto_mode", `"Make auto mode your default permission mode?" offer (manual mode configured)`},
		}
		seen := map[string]bool{}
		for range 4 {
			s := e.WaitFor("a start-up dialog or the idle composer", StartTimeout, func(s string) bool {
				d := StartupDialog(a.Kind, s)
				return (d != "" && !seen[d]) || e.Idle(s)
			})
			d := StartupDialog(a.Kind, s)
			if d == "" {
				break
			}
			seen[d] = true
			e.Settle()
			c.save(e, cases[d].name, StateStartupDialog, cases[d].description, nil)
			e.Choose(answers[d])
		}
		if !seen[DialogAutoMode] {
			t.Logf("%s did not offer auto mode on this start (it is an experiment gate)", a.Name())
		}
		e.WaitReady(StartTimeout)
	})

	e := fixtureEnv(t, a, Options{BeforeAnswer: c.saveOffer}).WithT(t)
	e.StartReady()
	e.Settle()
	c.save(e, "idle", StateIdle, "idle, empty composer", nil)

	e.Submit("Take your time " + fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "20"))
	e.WaitForText(captureTimeout, "esc to interrupt")
	time.Sleep(1500 * time.Millisecond)
	c.save(e, "working", StateWorking, "a reply streaming slowly", nil)
	e.Press("Escape")
	e.WaitFor("the interrupted turn", captureTimeout, func(s string) bool { return e.Idle(s) && strings.Contains(s, "Interrupted") })
	e.Settle()
	c.save(e, "interrupted", StateIdle, "after Esc interrupted a streaming reply", nil)

	e.Submit("Run the probe command " + fakemodel.Marker(fakemodel.ScenarioBash))
	e.WaitFor("the Bash approval prompt", captureTimeout, func(s string) bool { return ApprovalPrompt(a.Kind, s) })
	e.Settle()
	c.save(e, "permission_bash", StateAwaitingApproval, "Bash tool approval prompt", nil)
	e.Press("Enter")
	e.WaitTurnCompleted("akk-bash-ran", captureTimeout)
	e.WaitIdle(captureTimeout)

	e.Submit("Ask one thing " + fakemodel.Marker(fakemodel.ScenarioAsk))
	e.WaitFor("the questionnaire", captureTimeout, func(s string) bool { return Questionnaire(a.Kind, s) })
	e.Settle()
	c.save(e, "question_single", StateAwaitingInteraction, "AskUserQuestion, one question, single-select", nil)
	e.Press("Down", "Down") // to "Type something."
	e.Settle()
	e.Type("my own words")
	e.WaitForText(10*time.Second, "my own words")
	e.Settle()
	c.save(e, "question_free_text", StateAwaitingInteraction, `the "Type something." free-text editor with text typed`, nil)
	e.Press("Enter")
	e.WaitTurnCompleted("my own words", captureTimeout)
	e.WaitIdle(captureTimeout)

	e.Submit("Ask with choices " + fakemodel.Marker(fakemodel.ScenarioAsk, "multi", "true"))
	e.WaitFor("the multi-select questionnaire", captureTimeout, func(s string) bool { return Questionnaire(a.Kind, s) && strings.Contains(s, "[ ]") })
	e.Settle()
	c.save(e, "question_multi_select", StateAwaitingInteraction, "AskUserQuestion, one question, multiSelect true", nil)
	e.Press("Escape") // decline
	e.WaitIdle(captureTimeout)

	e.Submit("Ask two things " + fakemodel.Marker(fakemodel.ScenarioAsk, "questions", "2"))
	e.WaitFor("the two-question questionnaire", captureTimeout, func(s string) bool {
		return Questionnaire(a.Kind, s) && strings.Contains(s, "Submit") && strings.Contains(s, fakemodel.Questions[0].Question)
	})
	e.Settle()
	c.save(e, "question_multi", StateAwaitingInteraction, "AskUserQuestion, two questions: the tab header, first question", nil)
	e.Press("Enter") // Red, on to the next question
	e.WaitForText(10*time.Second, fakemodel.Questions[1].Question)
	e.Settle()
	e.Press("Enter") // Small, on to the review
	e.WaitForText(10*time.Second, "Submit answers")
	e.Settle()
	c.save(e, "question_review", StateAwaitingInteraction, `two questions answered: the "Review your answers" / "Submit answers" step`, nil)
	e.Press("Enter")
	e.WaitTurnCompleted("Small", captureTimeout)
	e.WaitIdle(captureTimeout)

	saveErrors(e, c, "attempt")
	saveComposerText(e, c)
}

// saveErrors captures an agent retrying a failing model (retrying marks the
// screen of it) and an error it shows at once.
func saveErrors(e *Env, c *capturer, retrying string) {
	e.Submit("Try the flaky model " + fakemodel.Marker(fakemodel.ScenarioError, "status", "500"))
	e.WaitForText(captureTimeout, retrying)
	time.Sleep(time.Second)
	c.save(e, "error_retrying", StateWorking, "the model answers HTTP 500; the agent retries", nil)
	e.Press("Escape")
	s := e.WaitFor("the retries stopped", captureTimeout, func(s string) bool { return !strings.Contains(s, "esc to interrupt") })
	if strings.Contains(s, "Try the flaky model") && !e.Idle(s) {
		// Claude Code puts the prompt back in the composer when Esc comes
		// before any answer.
		e.Settle()
		c.save(e, "interrupted_restored", StateIdle, "Esc before any answer: the prompt is back in the composer", notEmpty)
		e.Press("C-u")
	}
	e.WaitIdle(captureTimeout)
	e.Submit("Try the broken request " + fakemodel.Marker(fakemodel.ScenarioError, "status", "400"))
	e.WaitForText(captureTimeout, "Fake model error 400")
	e.WaitIdle(captureTimeout)
	e.Settle()
	c.save(e, "error_shown", StateIdle, "the model answered HTTP 400; the error is shown and the turn is over", nil)
}

// saveComposerText types without sending: the composer_text case.
func saveComposerText(e *Env, c *capturer) {
	e.Type("a draft the human has not sent")
	e.WaitForText(10*time.Second, "a draft the human has not sent")
	e.Settle()
	c.save(e, "composer_text", StateIdle, "idle, but the composer holds unsent text", notEmpty)
}

// saveOffer captures a start-up offer WaitReady is about to answer.
func (c *capturer) saveOffer(e *Env, dialog string) {
	switch dialog {
	case DialogAutoMode:
		c.save(e, "startup_auto_mode", StateStartupDialog, `"Make auto mode your default permission mode?" offer (manual mode configured)`, nil)
	case DialogModelMigrate:
		c.save(e, "startup_model_migration", StateStartupDialog, "the offer to switch to a newer model", nil)
	}
}

func captureCodex(t *testing.T, a Agent, c *capturer) {
	t.Run("startup", func(t *testing.T) {
		e := fixtureEnv(t, a, Options{Untrusted: true, ShowOffers: true}).WithT(t)
		e.Start()
		s := e.WaitFor("a start-up dialog or the idle composer", StartTimeout, func(s string) bool {
			return StartupDialog(a.Kind, s) != "" || e.Idle(s)
		})
		for i := 0; i < 3 && StartupDialog(a.Kind, s) != ""; i++ {
			d := StartupDialog(a.Kind, s)
			switch d {
			case DialogTrust:
				e.Settle()
				c.save(e, "startup_trust", StateStartupDialog, "first start in an untrusted folder: the trust prompt", nil)
				if strings.Contains(e.Capture(), "Trust and continue") { // 0.158 and 0.159
					e.Choose("Trust and continue")
				} else {
					e.Choose("Yes, continue")
				}
			case DialogModelMigrate:
				e.Settle()
				c.save(e, "startup_model_migration", StateStartupDialog, "the offer to switch to a newer model", nil)
				e.Choose("Use existing model")
			default:
				t.Fatalf("unexpected start-up dialog %q:\n%s", d, s)
			}
			s = e.WaitFor("the next start-up dialog or the idle composer", StartTimeout, func(s string) bool {
				next := StartupDialog(a.Kind, s)
				return (next != "" && next != d) || e.Idle(s)
			})
		}
	})

	e := fixtureEnv(t, a, Options{BeforeAnswer: c.saveOffer}).WithT(t)
	e.StartReady()
	e.Settle()
	c.save(e, "idle", StateIdle, "idle, empty composer (placeholder shown)", nil)

	e.Submit("Take your time " + fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "20", "lead", "false"))
	e.WaitForText(captureTimeout, "esc to interrupt")
	time.Sleep(1500 * time.Millisecond)
	c.save(e, "working", StateWorking, "waiting for a slow reply (no answer text yet)", nil)
	e.Press("Escape")
	e.WaitFor("the interrupted turn", captureTimeout, func(s string) bool { return e.Idle(s) && strings.Contains(s, "interrupted") })
	e.Settle()
	c.save(e, "interrupted", StateIdle, "after Esc interrupted a turn", nil)

	e.Submit("Run the probe command " + fakemodel.Marker(fakemodel.ScenarioBash))
	e.WaitFor("the command approval prompt", captureTimeout, func(s string) bool { return ApprovalPrompt(a.Kind, s) })
	e.Settle()
	c.save(e, "permission_command", StateAwaitingApproval, "exec_command with require_escalated: the approval prompt", nil)
	e.Press("Enter")
	e.WaitTurnCompleted("akk-bash-ran", captureTimeout)
	e.WaitIdle(captureTimeout)

	e.PlanMode()
	e.Settle()
	c.save(e, "idle_plan_mode", StateIdle, "idle in Plan mode (after Shift+Tab)", nil)

	e.Submit("Ask one thing " + fakemodel.Marker(fakemodel.ScenarioAsk))
	e.WaitFor("the questionnaire", captureTimeout, func(s string) bool { return Questionnaire(a.Kind, s) })
	e.Settle()
	c.save(e, "question_plan", StateAwaitingInteraction, "Plan mode request_user_input, one question", nil)
	e.Press("Tab")
	e.Settle()
	e.Type("some notes")
	e.WaitForText(10*time.Second, "some notes")
	e.Settle()
	c.save(e, "question_notes", StateAwaitingInteraction, "the notes editor (Tab) with text typed", nil)
	e.Press("Enter")
	e.WaitTurnCompleted("some notes", captureTimeout)
	e.WaitIdle(captureTimeout)

	e.Submit("Ask two things " + fakemodel.Marker(fakemodel.ScenarioAsk, "questions", "2"))
	e.WaitFor("the two-question questionnaire", captureTimeout, func(s string) bool { return Questionnaire(a.Kind, s) && strings.Contains(s, "1/2") })
	e.Settle()
	c.save(e, "question_multi", StateAwaitingInteraction, "Plan mode request_user_input, two questions, first shown", nil)
	e.Press("Enter")
	e.WaitForText(10*time.Second, fakemodel.Questions[1].Question)
	e.Settle()
	c.save(e, "question_multi_last", StateAwaitingInteraction, "two questions, the last one (enter submits all)", nil)
	e.Press("Enter")
	e.WaitTurnCompleted("Small", captureTimeout)
	e.WaitIdle(captureTimeout)

	e.Press("BTab") // back to Default mode
	e.WaitFor("Default mode", 10*time.Second, func(s string) bool { return !strings.Contains(s, "Plan mode (") })
	e.WaitIdle(captureTimeout)
	saveErrors(e, c, "Reconnecting")
	saveComposerText(e, c)
}
