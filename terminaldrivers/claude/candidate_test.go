package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agent/screencases"
)

// checkCandidate runs screencases.CheckCandidate when make profile-new names
// a release of kind: the nearest profile, as that version (as), on the
// release's captured screens.
func checkCandidate(t *testing.T, kind domain.AgentKind, as func(agent.Profile, string) agent.Profile) {
	one := os.Getenv(screencases.CandidateEnv)
	k, version, _ := strings.Cut(one, "@")
	if one == "" || domain.AgentKind(k) != kind {
		t.Skip("make profile-new sets " + screencases.CandidateEnv)
	}
	reg, err := agent.RegistryOf([]agent.Driver{Driver{}})
	if err != nil {
		t.Fatal(err)
	}
	near, exact, ok := reg.Resolve(kind, version)
	if !ok {
		t.Fatalf("no profile near %s", one)
	}
	if exact {
		t.Fatalf("%s has a profile already", one)
	}
	t.Logf("NEAREST %s", near.Agent().Version)
	screencases.CheckCandidate(t, as(near, version), filepath.Join(os.Getenv(screencases.CandidateDirEnv), k))
}
