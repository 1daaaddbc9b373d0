package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEAgentTableMatchesPins keeps docs/agents.md's compatibility table in
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
	readme, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "<!-- agents-table:start -->")
	table, _, ok2 := strings.Cut(table, "<!-- agents-table:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/agents.md has no agents table markers")
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
		t.Fatalf("docs/agents.md's table %v, scripts/agents.txt %v", got, want)
	}
}

// TestREADMEConfigurationListsEveryFlag: each flag of akkd has its row in
// docs/configuration.md's table.
func TestREADMEConfigurationListsEveryFlag(t *testing.T) {
	var usage strings.Builder
	parseConfig([]string{"akkd", "-help"}, func(string) string { return "" }, &usage)
	readme, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(usage.String(), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(line, "  -") {
			continue
		}
		n++
		if name := strings.TrimPrefix(f[0], "-"); !strings.Contains(string(readme), "| `--"+name+"` |") {
			t.Errorf("docs/configuration.md has no row for --%s", name)
		}
	}
	if n < 10 {
		t.Fatalf("only %d flags in the usage:\n%s", n, usage.String())
	}
}

// TestREADMEOpenClawRecipeIsTheTestedOne keeps the OpenClaw recipe (docs/connectors.md)
// the one TestE2EOpenClaw runs: its hook mapping, its MCP server and plugin
// settings, and the pinned OpenClaw and Node versions it names.
func TestREADMEOpenClawRecipeIsTheTestedOne(t *testing.T) {
	recipe, err := os.ReadFile("../../docs/connectors.md")
	if err != nil {
		t.Fatal(err)
	}
	versions, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := append(recipe, versions...)
	pins, err := os.ReadFile("../../scripts/openclaw.txt")
	if err != nil {
		t.Fatal(err)
	}
	var openclaw, node string
	for _, line := range strings.Split(string(pins), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(f[0], "#") {
			openclaw, node = f[0], f[1]
		}
	}
	cfg := openclawConfig("18789", "http://127.0.0.1:1/v1", "k", "http://127.0.0.1:7788", "AKK_HOST_TOKEN", "OPENCLAW_HOOKS_TOKEN", "/p", "/w")
	mapping := cfg["hooks"].(map[string]any)["mappings"].([]any)[0].(map[string]any)
	server := cfg["mcp"].(map[string]any)["servers"].(map[string]any)["akk"].(map[string]any)
	for _, want := range []string{
		"OpenClaw " + openclaw, "Node " + node,
		`messageTemplate: "` + openclawMessageTemplate + `"`,
		`sessionKey: "` + mapping["sessionKey"].(string) + `"`,
		`sessionMode: "` + mapping["sessionMode"].(string) + `"`,
		`transport: "` + server["transport"].(string) + `"`,
		`url: "` + server["url"].(string) + `"`,
		"toolSearch: false", "allowRequestSessionKey: true", `allowedSessionKeyPrefixes: ["hook:", "agent:main:"]`,
		`config: { url: "http://127.0.0.1:7788", token: "AKK_HOST_TOKEN" }`,
		"hooks: { allowConversationAccess: true }",
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("docs/connectors.md's OpenClaw recipe lacks %s", want)
		}
	}
}

// TestREADMEPiRecipeIsTheTestedOne keeps the Pi recipe (the README's few
// lines and docs/connectors.md) the one TestE2EPi runs: the host's webhook
// path and events, the extension's environment and command line, its
// default callback address, and the pinned Pi and Node versions.
func TestREADMEPiRecipeIsTheTestedOne(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, docs, ext := read("../../README.md"), read("../../docs/connectors.md"), read("../../connectors/common/config.js")
	var pi, node string
	for _, line := range strings.Split(read("../../scripts/pi.txt"), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(f[0], "#") {
			pi, node = f[0], f[1]
		}
	}
	const listen = "127.0.0.1:7790"
	if !strings.Contains(ext, `env.AKK_CALLBACK_LISTEN || "`+listen+`"`) {
		t.Errorf("the extension's default callback address is not %s", listen)
	}
	env, args := piRecipe("http://127.0.0.1:7788", "akk_h_…", "whsec_…", listen)
	command := "pi " + strings.Join(args, " ")
	command = strings.Replace(command, "connectors/pi", "./connectors/pi", 1)
	for name, text := range map[string]string{"README.md": readme, "docs/connectors.md": docs} {
		wants := []string{"--webhook-url http://" + listen + piWebhookPath, command}
		for _, e := range piEvents {
			wants = append(wants, "--event "+e)
		}
		for _, e := range env {
			k, v, _ := strings.Cut(e, "=")
			if name == "docs/connectors.md" {
				wants = append(wants, e)
			} else if k == "AKK_TOKEN" || k == "AKK_WEBHOOK_SECRET" {
				wants = append(wants, k+"="+v)
			}
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s's Pi recipe lacks %s", name, want)
			}
		}
	}
	if want := "pi-coding-agent` " + pi + " on Node " + node; !strings.Contains(docs, want) {
		t.Errorf("docs/connectors.md does not name the pinned versions: %s", want)
	}
}

// TestREADMEDeepSeekHarnessRecipeIsTheTestedOne keeps the DeepSeek Harness
// recipe (the README's lines and docs/connectors.md) the one
// TestE2EDeepSeekHarness runs: the plugin's link, the environment, dsh's
// command line, and the pinned dsh and Node versions.
func TestREADMEDeepSeekHarnessRecipeIsTheTestedOne(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, docs := read("../../README.md"), read("../../docs/connectors.md")
	var dsh, node string
	for _, line := range strings.Split(read("../../scripts/dsh.txt"), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(f[0], "#") {
			dsh, node = f[0], f[1]
		}
	}
	env, args := dshRecipe("http://127.0.0.1:7788", "akk_h_…", "whsec_…", "127.0.0.1:7790")
	const link = `ln -s "$PWD/connectors/deepseek-harness" ~/.dsh/profiles/web/node_modules/akk-deepseek-harness`
	for name, text := range map[string]string{"README.md": readme, "docs/connectors.md": docs} {
		wants := []string{"dsh " + strings.Join(args, " "), link, "--webhook-url http://127.0.0.1:7790" + piWebhookPath}
		for _, e := range env {
			if k, _, _ := strings.Cut(e, "="); name == "docs/connectors.md" || k == "AKK_TOKEN" || k == "AKK_WEBHOOK_SECRET" {
				wants = append(wants, e)
			}
		}
		if name == "docs/connectors.md" {
			for _, e := range piEvents {
				wants = append(wants, "--event "+e)
			}
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s's DeepSeek Harness recipe lacks %s", name, want)
			}
		}
	}
	if want := "`@deepseek-ai/dsh` " + dsh + " on Node " + node; !strings.Contains(docs, want) {
		t.Errorf("docs/connectors.md does not name the pinned versions: %s", want)
	}
	// The test links the plugin where the recipe does.
	if !strings.Contains(link, filepath.Join("profiles", "web", "node_modules", "akk-deepseek-harness")) {
		t.Errorf("the recipe's link is not the test's")
	}
}

// contrib/akkd.service starts akkd with flags akkd takes, and the README
// gives the lines that enable it.
func TestSystemdUnitRunsAkkd(t *testing.T) {
	unit, err := os.ReadFile("../../contrib/akkd.service")
	if err != nil {
		t.Fatal(err)
	}
	var exec []string
	for _, l := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			exec = strings.Fields(v)
		}
	}
	if len(exec) == 0 || !strings.HasSuffix(exec[0], "/akkd") {
		t.Fatalf("ExecStart %v", exec)
	}
	env := map[string]string{"HOME": t.TempDir()}
	if _, err := parseConfig(append([]string{"akkd"}, exec[1:]...), func(k string) string { return env[k] }, io.Discard); err != nil {
		t.Fatalf("the unit's flags: %v", err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"contrib/akkd.service", "systemctl --user enable --now akkd"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("the README does not say %q", want)
		}
	}
}
