package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockStateDir takes an exclusive lock on the state directory for as long
// as the daemon runs: two daemons on one state dir would both type into
// the same panes. The lock file names the holder's pid; the kernel drops
// the lock when the process ends, however it ends.
func lockStateDir(dir string) (release func(), err error) {
	path := filepath.Join(dir, "akkd.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open state lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(b))
			if holder == "" {
				holder = "unknown"
			}
			return nil, fmt.Errorf("another akkd (pid %s) already uses the state directory %s; stop it or give this one its own --state-dir", holder, dir)
		}
		return nil, fmt.Errorf("lock state dir: %w", err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
