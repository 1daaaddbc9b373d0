package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVendoredFiles checks every vendored file against ui/vendor/VENDOR:
// its SHA-256 always, and, where the test tools are installed (CI installs
// them), that it is byte for byte the file of the package at the pinned
// version, which npm installed after checking the package's published
// integrity (also recorded in VENDOR and compared with npm's lock).
func TestVendoredFiles(t *testing.T) {
	list, err := files.ReadFile("ui/vendor/VENDOR")
	if err != nil {
		t.Fatal(err)
	}
	modules := filepath.Join(nodeToolsDir(), "node_modules")
	lock := map[string]struct{ Version, Integrity string }{}
	if b, err := os.ReadFile(filepath.Join(modules, ".package-lock.json")); err == nil {
		var l struct {
			Packages map[string]struct{ Version, Integrity string } `json:"packages"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		for k, v := range l.Packages {
			lock[strings.TrimPrefix(k, "node_modules/")] = v
		}
	} else if os.Getenv("AKK_REQUIRE_TOOLS") == "1" {
		t.Fatalf("the Node tools are not installed (make node-tools): %v", err)
	}
	versions := map[string]string{}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(list), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch {
		case f[0] == "package" && len(f) == 4:
			versions[f[1]] = f[2]
			if l, ok := lock[f[1]]; ok && (l.Version != f[2] || l.Integrity != f[3]) {
				t.Errorf("%s: VENDOR says %s %s, npm installed %s %s", f[1], f[2], f[3], l.Version, l.Integrity)
			}
		case f[0] == "file" && len(f) == 5:
			b, err := files.ReadFile("ui/vendor/" + f[3])
			if err != nil {
				t.Errorf("%s: %v", f[3], err)
				continue
			}
			seen[f[3]] = true
			sum := sha256.Sum256(b)
			if hex.EncodeToString(sum[:]) != f[2] {
				t.Errorf("%s: SHA-256 %x, VENDOR says %s", f[3], sum, f[2])
			}
			if _, ok := lock[f[1]]; !ok {
				continue
			}
			orig, err := os.ReadFile(filepath.Join(modules, f[1], f[4]))
			if err != nil {
				t.Errorf("%s: %v", f[3], err)
			} else if !bytes.Equal(orig, b) {
				t.Errorf("%s differs from %s@%s's %s", f[3], f[1], versions[f[1]], f[4])
			}
		default:
			t.Errorf("VENDOR: a line I cannot read: %q", line)
		}
	}
	// Nothing vendored that VENDOR does not name.
	entries, _ := files.ReadDir("ui/vendor")
	for _, d := range entries {
		if !d.IsDir() {
			continue
		}
		sub, _ := files.ReadDir("ui/vendor/" + d.Name())
		for _, e := range sub {
			if p := d.Name() + "/" + e.Name(); !seen[p] {
				t.Errorf("ui/vendor/%s is not in VENDOR", p)
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("VENDOR names no file")
	}
}

func nodeToolsDir() string {
	if d := os.Getenv("AKK_NODE_TOOLS_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(cache, "akk", "node-tools")
}
