package agenttest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ProcessesUnder lists the pids of this user's processes that belong to a
// test home: HOME or CODEX_HOME in /proc/<pid>/environ is the home (or under
// it), or the executable or a command-line argument is a path under it. That
// finds the agents a test started and Codex 0.169.0's managed app-server
// daemon (whose binary is copied under $CODEX_HOME), and nothing else.
func ProcessesUnder(home string) []int {
	home = filepath.Clean(home)
	prefix := home + string(filepath.Separator)
	under := func(p string) bool { return p == home || strings.HasPrefix(p, prefix) }
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self, uid := os.Getpid(), uint32(os.Getuid())
	var pids []int
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", ent.Name())
		var st syscall.Stat_t
		if syscall.Stat(dir, &st) != nil || st.Uid != uid {
			continue
		}
		if belongs(dir, under) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func belongs(procDir string, under func(string) bool) bool {
	if env, err := os.ReadFile(filepath.Join(procDir, "environ")); err == nil {
		for _, kv := range bytes.Split(env, []byte{0}) {
			k, v, ok := strings.Cut(string(kv), "=")
			if ok && (k == "HOME" || k == "CODEX_HOME") && under(v) {
				return true
			}
		}
	}
	if exe, err := os.Readlink(filepath.Join(procDir, "exe")); err == nil && under(strings.TrimSuffix(exe, " (deleted)")) {
		return true
	}
	if cmdline, err := os.ReadFile(filepath.Join(procDir, "cmdline")); err == nil {
		for _, arg := range bytes.Split(cmdline, []byte{0}) {
			if under(string(arg)) {
				return true
			}
		}
	}
	return false
}

// stopProcessesUnder sends SIGTERM to every process under home, waits for
// them to go, then SIGKILLs what is left. It repeats, because a daemon may
// spawn a helper while it is being stopped.
func stopProcessesUnder(home string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	sig := syscall.SIGTERM
	termUntil := time.Now().Add(timeout / 2)
	for {
		pids := ProcessesUnder(home)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes under %s still running: %v", home, pids)
		}
		if time.Now().After(termUntil) {
			sig = syscall.SIGKILL
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, sig)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
