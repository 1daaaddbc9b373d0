package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEAgentTableMatchesPins keeps the README's compatibility table in
// step with scripts/agents.txt, the single list of pinned versions.
func TestREADMEAgentTableMatchesPins(t *testing.T) {
	pins, err := os.ReadFile("../../scripts/agents.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(string(pins), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && !strings.HasPrefix(f[0], "#") {
			want = append(want, f[0]+" "+f[1])
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "<!-- agents-table:start -->")
	table, _, ok2 := strings.Cut(table, "<!-- agents-table:end -->")
	if !ok || !ok2 {
		t.Fatal("README has no agents table markers")
	}
	var got []string
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) < 2 {
			continue
		}
		kind, version := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1])
		if kind == "agent" || strings.HasPrefix(kind, "---") || kind == "" {
			continue
		}
		got = append(got, kind+" "+version)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("README agents table %v, scripts/agents.txt %v", got, want)
	}
}
