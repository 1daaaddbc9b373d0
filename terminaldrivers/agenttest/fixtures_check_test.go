package agenttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixturesAreConsistent checks the committed fixtures without running
// any agent: every case folder has its three files, meta.json matches the
// folder, and the harness's own recognisers agree with expected_state.
func TestFixturesAreConsistent(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(root, "terminaldrivers", "testdata", "screens")
	pinned, err := PinnedAgents()
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]bool{StateIdle: true, StateWorking: true, StateAwaitingApproval: true,
		StateAwaitingInteraction: true, StateStartupDialog: true, StateUnknown: true}
	for _, a := range pinned {
		cases, err := os.ReadDir(filepath.Join(base, a.Kind, a.Version))
		if err != nil {
			t.Errorf("%s: no fixtures (run make fixtures): %v", a.Name(), err)
			continue
		}
		for _, c := range cases {
			t.Run(a.Name()+"/"+c.Name(), func(t *testing.T) {
				dir := filepath.Join(base, a.Kind, a.Version, c.Name())
				var meta FixtureMeta
				data, err := os.ReadFile(filepath.Join(dir, "meta.json"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(data, &meta); err != nil {
					t.Fatal(err)
				}
				if meta.Agent != a.Kind || meta.Version != a.Version || meta.Case != c.Name() || !states[meta.ExpectedState] {
					t.Errorf("meta.json %+v does not match %s/%s/%s", meta, a.Kind, a.Version, c.Name())
				}
				txt, err := os.ReadFile(filepath.Join(dir, "screen.txt"))
				if err != nil {
					t.Fatal(err)
				}
				ansi, err := os.ReadFile(filepath.Join(dir, "screen.ansi"))
				if err != nil {
					t.Fatal(err)
				}
				s := string(txt)
				if lines := strings.Count(s, "\n"); lines != meta.Height || !strings.Contains(string(ansi), "\x1b[") {
					t.Errorf("screen.txt has %d lines for height %d, or screen.ansi has no escapes", lines, meta.Height)
				}
				e := &Env{Agent: a, ProjectDir: meta.ProjectDir}
				var ok bool
				switch meta.ExpectedState {
				case StateStartupDialog:
					ok = StartupDialog(a.Kind, s) != ""
				case StateAwaitingApproval:
					ok = ApprovalPrompt(a.Kind, s)
				case StateAwaitingInteraction:
					ok = Questionnaire(a.Kind, s)
				case StateWorking:
					ok = strings.Contains(s, "esc to interrupt")
				case StateIdle:
					ok = e.Idle(s) || (meta.ComposerEmpty != nil && !*meta.ComposerEmpty)
				default:
					ok = true
				}
				if !ok {
					t.Errorf("the harness does not see %s on this screen:\n%s", meta.ExpectedState, frame(s))
				}
			})
		}
	}
}
