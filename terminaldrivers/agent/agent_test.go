package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/screen"
)

type fakeProfile domain.Agent

func (p fakeProfile) Agent() domain.Agent { return domain.Agent(p) }
func (fakeProfile) Classify(screen.Capture) Reading {
	return Reading{State: domain.ScreenUnknown}
}

func TestRegistry(t *testing.T) {
	a := fakeProfile{Kind: domain.AgentCodex, Version: "0.169.0", Profile: "codex-0.169.0"}
	b := fakeProfile{Kind: domain.AgentClaude, Version: "2.1.328", Profile: "claude-2.1.328"}
	r, err := NewRegistry(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := r.Lookup(domain.AgentCodex, "0.169.0"); !ok || p.Agent() != domain.Agent(a) {
		t.Fatalf("Lookup = %v, %v", p, ok)
	}
	if _, ok := r.Lookup(domain.AgentClaude, "0.169.0"); ok {
		t.Fatal("a version of another kind was found")
	}
	if s := r.Supported(); len(s) != 2 || s[0].Kind != domain.AgentClaude {
		t.Fatalf("Supported = %v", s)
	}
	if _, err := NewRegistry(a, a); err == nil {
		t.Fatal("two profiles for one version: no error")
	}
	if _, err := NewRegistry(fakeProfile{Kind: domain.AgentCodex, Version: "1.0.0", Profile: domain.ProfileUnprofiled}); err == nil {
		t.Fatal("a profile named unprofiled: no error")
	}
}

func TestPackageVersion(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pkg", "a", "b", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pkg", "package.json"), []byte(`{"name":"@x/tool","version":"1.2.3"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pkg", "a", "package.json"), []byte(`{"name":"other","version":"9.9.9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(bin, "tool")
	if v, err := PackageVersion(exe, 4, "@x/tool"); err != nil || v != "1.2.3" {
		t.Fatalf("PackageVersion = %q, %v", v, err)
	}
	if _, err := PackageVersion(exe, 2, "@x/tool"); err == nil {
		t.Fatal("found beyond the level limit")
	}
	if _, err := PackageVersion(exe+Deleted, 4, "@x/tool"); err == nil {
		t.Fatal("read the version of a replaced binary")
	}
}

func TestTailLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	body := strings.Repeat("x", 50) + "\n" + "second\n" + "third\n" + "partial"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := TailLines(path, 20)
	if err != nil || len(got) != 1 || string(got[0]) != "third" {
		t.Fatalf("TailLines(20) = %q, %v", got, err)
	}
	got, err = TailLines(path, 1<<20)
	if err != nil || len(got) != 3 || string(got[1]) != "second" {
		t.Fatalf("TailLines(all) = %q, %v", got, err)
	}
	if _, err := TailLines(path+".missing", 10); err == nil {
		t.Fatal("missing file: no error")
	}
}

func TestResolveUsesTheNearestLowerProfile(t *testing.T) {
	p := func(kind domain.AgentKind, v string) fakeProfile {
		return fakeProfile{Kind: kind, Version: v, Profile: string(kind) + "-" + v}
	}
	r, err := NewRegistry(p(domain.AgentCodex, "0.155.1"), p(domain.AgentCodex, "0.169.0"), p(domain.AgentCodex, "0.99.0"), p(domain.AgentClaude, "2.1.328"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind      domain.AgentKind
		version   string
		want      string // profile name, "" for none
		wantExact bool
	}{
		{domain.AgentCodex, "0.169.0", "codex-0.169.0", true},
		{domain.AgentCodex, "0.170.2", "codex-0.169.0", false},
		{domain.AgentCodex, "0.160.0", "codex-0.155.1", false},
		{domain.AgentCodex, "0.100.0", "codex-0.99.0", false}, // numeric, not lexical
		{domain.AgentCodex, "0.98.9", "", false},              // older than every profile
		{domain.AgentCodex, "0.170.0-alpha.1", "", false},     // not a complete x.y.z
		{domain.AgentCodex, "", "", false},
		{domain.AgentClaude, "2.1.400", "claude-2.1.328", false},
		{domain.AgentClaude, "0.169.0", "", false}, // another kind's profiles never lend
	} {
		got, exact, ok := r.Resolve(c.kind, c.version)
		name := ""
		if ok {
			name = got.Agent().Profile
		}
		if name != c.want || exact != c.wantExact {
			t.Errorf("Resolve(%s, %q) = %q exact=%v, want %q exact=%v", c.kind, c.version, name, exact, c.want, c.wantExact)
		}
	}
	if s := r.Supported(); s[1].Version != "0.99.0" || s[3].Version != "0.169.0" {
		t.Errorf("Supported not in version order: %v", s)
	}
}
