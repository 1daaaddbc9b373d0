package agenttest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestE2ECleanup checks that an Env's cleanup stops everything its test
// started, including the app-server daemon Codex 0.169.0 leaves running under
// CODEX_HOME after its TUI and tmux server are gone, and that the agent
// process really runs with the test's HOME.
func TestE2ECleanup(t *testing.T) {
	var a Agent
	for _, x := range RequireAgents(t, KindCodex) {
		a = x // the newest pinned Codex: the one with the daemon
	}
	t.Parallel()
	var home, socket string
	var during []int
	t.Run("env", func(t *testing.T) {
		e := New(t, a, Options{})
		e.StartReady()
		home, socket = e.Home, e.SocketPath()
		if st, err := os.Stat(socket); err != nil || st.Mode()&os.ModeSocket == 0 {
			t.Errorf("SocketPath %s is not a socket: %v", socket, err)
		}
		env, err := os.ReadFile("/proc/" + itoa(e.PanePID()) + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(env), "\x00HOME="+e.Home+"\x00") && !strings.HasPrefix(string(env), "HOME="+e.Home+"\x00") {
			t.Errorf("the agent process does not run with HOME=%s", e.Home)
		}
		// Give the daemon time to come up, then look at what runs under home.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if during = ProcessesUnder(home); len(during) >= 2 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if len(during) < 2 {
			t.Logf("processes under the test home: %v", during)
		}
	})
	if left := ProcessesUnder(home); len(left) > 0 {
		t.Errorf("processes still running under the test home after cleanup: %v (before: %v)", left, during)
	}
	if _, err := os.Stat(socket); err == nil {
		t.Errorf("tmux socket %s still exists after cleanup", socket)
	}
	t.Logf("%s: %d processes ran under the test home, none left", a.Name(), len(during))
}

func itoa(n int) string { return strconv.Itoa(n) }
