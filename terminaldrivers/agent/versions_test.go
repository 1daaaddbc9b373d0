package agent

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// agentVersion is a Claude Code (2.1.x) or Codex (0.1xx.y) version inside a
// string literal; not followed by a further ".digit" (an address).
var agentVersion = regexp.MustCompile(`(^|[^0-9.])(2\.1\.[0-9]{3}|0\.1[0-9]{2}\.[0-9]+)($|[^0-9.]|\.[^0-9])`)

// TestNoVersionLiteralsOutsideProfiles keeps the version profile the one
// unit of agent knowledge: no string literal in non-test Go code names an
// agent version, except in the profile files (profiles.go).
func TestNoVersionLiteralsOutsideProfiles(t *testing.T) {
	root := moduleRoot(t)
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || name == "node_modules" || (strings.HasPrefix(name, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == "profiles.go" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		fset := token.NewFileSet()
		file := fset.AddFile(path, -1, len(src))
		var s scanner.Scanner
		s.Init(file, src, nil, 0)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if (tok == token.STRING || tok == token.CHAR) && agentVersion.MatchString(lit) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: agent version literal %s outside a profile file; put it in the version's profile value", rel, fset.Position(pos).Line, lit)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked only %d files under %s", checked, root)
	}
}

func TestVersionPatternCatchesAgentVersions(t *testing.T) {
	for lit, want := range map[string]bool{
		`"2.1.267"`: true, `"0.169.0"`: true, `"codex@0.155.1"`: true, `"0.169.0-linux-x64"`: true,
		`"127.0.0.1"`: false, `"1.26.8"`: false, `"2.1"`: false, `"10.2.1.5"`: false,
	} {
		if got := agentVersion.MatchString(lit); got != want {
			t.Errorf("%s: matched %v, want %v", lit, got, want)
		}
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
