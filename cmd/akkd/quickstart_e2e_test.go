package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

// quickStartSkipped are the README's Start lines this test does not run:
// they install a systemd user unit, and CI has no user session manager.
var quickStartSkipped = []string{"mkdir -p ~/.config/systemd/user", "systemctl --user", "journalctl --user"}

// quickStart is every command of the README's Start section, in order,
// its comment cut off.
func quickStart(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, start, ok := strings.Cut(string(b), "\n## Start\n")
	if !ok {
		t.Fatal("the README has no Start section")
	}
	start, _, _ = strings.Cut(start, "\n## ")
	var cmds []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(start))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in:
			if i := strings.Index(l, "  #"); i >= 0 {
				l = l[:i]
			}
			if l = strings.TrimSpace(l); l != "" {
				cmds = append(cmds, l)
			}
		}
	}
	return cmds
}

// TestE2EQuickStart runs the README's Start section as a newcomer would,
// from `make build` to an approved prompt with akk alone, against the real
// agent in tmux (the newest pinned Claude Code and Codex). Its ids are the
// ones the commands before printed; the task asks for a command, so the
// agent asks for permission.
func TestE2EQuickStart(t *testing.T) {
	cmds := quickStart(t)
	if len(cmds) < 8 {
		t.Fatalf("the Start section has %d commands: %q", len(cmds), cmds)
	}
	agents := agenttest.RequireAgents(t)
	var newest []agenttest.Agent
	for _, kind := range []string{agenttest.KindClaude, agenttest.KindCodex} {
		var last agenttest.Agent
		for _, a := range agents {
			if a.Kind == kind {
				last = a
			}
		}
		newest = append(newest, last)
	}
	root, _ := filepath.Abs("../..")
	for _, a := range newest {
		t.Run(a.Name(), func(t *testing.T) {
			e := agenttest.New(t, a, agenttest.Options{})
			e.StartReady()
			state := t.TempDir()
			addr := freeAddr(t)
			env := append(os.Environ(), "AKK_STATE_DIR="+state, "AKK_LISTEN="+addr, "AKK_URL=http://"+addr,
				"AKK_TMUX_SOCKETS="+e.SocketPath(), "AKK_TMUX_DEFAULT_SOCKETS=off", "AKK_CONFIG="+filepath.Join(state, "none.toml"))
			var conv, turn string
			sh := func(line string) string {
				t.Helper()
				line = strings.ReplaceAll(line, "conv_1a2b3c", conv)
				line = strings.ReplaceAll(line, "turn_9f8e7d", turn)
				line = strings.ReplaceAll(line, `"Add a test for the parser"`, `'[[akk:bash cmd="touch quick-start.txt"]] Add a test for the parser'`)
				cmd := exec.Command("bash", "-c", line)
				cmd.Dir, cmd.Env = root, env
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", line, err, out)
				}
				t.Logf("$ %s\n%s", line, out)
				return string(out)
			}
			for _, c := range cmds {
				switch {
				case skipped(c):
				case c == "bin/akkd":
					d := exec.Command(filepath.Join(root, "bin", "akkd"))
					d.Dir, d.Env = root, env
					d.Stdout, d.Stderr = os.Stderr, os.Stderr
					if err := d.Start(); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { d.Process.Kill(); d.Wait() })
					for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
						if r, err := http.Get("http://" + addr + "/v1/health"); err == nil {
							r.Body.Close()
							break
						}
						if time.Now().After(deadline) {
							t.Fatal("bin/akkd did not serve in 30 s")
						}
					}
				case strings.HasPrefix(c, "export PATH="):
					env = append(env, "PATH="+filepath.Join(root, "bin")+":"+os.Getenv("PATH"))
				case c == "akk list":
					// A person reads the id off the row of their agent.
					var out string
					for deadline := time.Now().Add(60 * time.Second); conv == ""; time.Sleep(400 * time.Millisecond) {
						out = sh(c)
						for _, l := range strings.Split(out, "\n") {
							if f := strings.Fields(l); len(f) > 3 && f[1] == a.Kind && strings.Contains(l, "send") {
								conv = f[0]
							}
						}
						if conv == "" && time.Now().After(deadline) {
							t.Fatalf("akk list shows no send-ready %s row:\n%s", a.Kind, out)
						}
					}
				case strings.HasPrefix(c, "akk send --wait"):
					out := sh(c)
					if first := strings.Fields(strings.SplitN(out, "\n", 2)[0]); len(first) > 1 && first[0] == "turn" {
						turn = strings.TrimSuffix(first[1], ":")
					}
					if turn == "" || !strings.Contains(out, "waiting for you") {
						t.Fatalf("send --wait did not stop at the prompt:\n%s", out)
					}
				case c == "akk status turn_9f8e7d":
					if out := sh(c); !strings.Contains(out, "quick-start.txt") || !strings.Contains(out, "akk approve "+turn+" approve_once|reject") {
						t.Fatalf("status does not show the command and how to answer:\n%s", out)
					}
				case c == "akk approve turn_9f8e7d approve_once":
					if out := sh(c); !strings.HasPrefix(out, "approve_once: done") {
						t.Fatalf("approve:\n%s", out)
					}
				case c == "akk status --wait turn_9f8e7d":
					if out := sh(c); !strings.Contains(out, "turn.completed") {
						t.Fatalf("status --wait:\n%s", out)
					}
				case strings.HasPrefix(c, "akk hosts add"):
					if out := sh(c); !strings.Contains(out, "akk_h_") {
						t.Fatalf("hosts add printed no token:\n%s", out)
					}
				case c == "make build" || c == "akk doctor":
					sh(c)
				default:
					t.Fatalf("the README's Start has a command this test does not run: %q", c)
				}
			}
			if turn == "" {
				t.Fatal("no Turn was sent")
			}
			if _, err := os.Stat(filepath.Join(e.ProjectDir, "quick-start.txt")); err != nil {
				t.Fatalf("the approved command did not run: %v", err)
			}
			fmt.Fprintln(os.Stderr, "quick start done on", a.Name())
		})
	}
}

func skipped(c string) bool {
	for _, s := range quickStartSkipped {
		if strings.HasPrefix(c, s) {
			return true
		}
	}
	return false
}
