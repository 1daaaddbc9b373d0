package agenttest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Owner is the testing.TB a shared world's parts are made with (an Env, an
// akkd, a temp folder): their cleanups are the world's, run by Run when the
// world is torn down, not when the test that made it ends; failures and
// logs go to the test bound to it now (Bind), the one leasing the world.
type Owner struct {
	testing.TB // the test leasing the world; nil between leases
	mu         sync.Mutex
	cleanups   []func()
}

// Bind makes t the test that failures and logs go to.
func (o *Owner) Bind(t testing.TB) { o.mu.Lock(); o.TB = t; o.mu.Unlock() }

func (o *Owner) cur() testing.TB { o.mu.Lock(); defer o.mu.Unlock(); return o.TB }

// Cleanup registers f to run when the world is torn down.
func (o *Owner) Cleanup(f func()) { o.mu.Lock(); o.cleanups = append(o.cleanups, f); o.mu.Unlock() }

// TempDir is a folder removed when the world is torn down.
func (o *Owner) TempDir() string {
	dir, err := os.MkdirTemp("", "akk-world-")
	if err != nil {
		o.Fatal(err)
	}
	o.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (o *Owner) Helper() {}

func (o *Owner) Name() string {
	if t := o.cur(); t != nil {
		return t.Name()
	}
	return "world"
}

func (o *Owner) Failed() bool {
	if t := o.cur(); t != nil {
		return t.Failed()
	}
	return false
}

func (o *Owner) Logf(format string, args ...any) {
	if t := o.cur(); t != nil {
		t.Logf(format, args...)
		return
	}
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func (o *Owner) Errorf(format string, args ...any) {
	if t := o.cur(); t != nil {
		t.Errorf(format, args...)
		return
	}
	fmt.Fprintf(os.Stderr, "world: "+format+"\n", args...)
}

// Run runs the cleanups, the last registered first.
func (o *Owner) Run() {
	o.mu.Lock()
	cs := o.cleanups
	o.cleanups = nil
	o.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}

// ProjectEntries names what the project folder holds now: what a shared
// world keeps when ResetProject clears what later tests left.
func (e *Env) ProjectEntries() map[string]bool {
	entries, _ := os.ReadDir(e.ProjectDir)
	names := map[string]bool{}
	for _, en := range entries {
		names[en.Name()] = true
	}
	return names
}

// ResetProject removes from the project folder every entry keep does not
// name.
func (e *Env) ResetProject(keep map[string]bool) {
	e.t.Helper()
	for name := range e.ProjectEntries() {
		if !keep[name] {
			if err := os.RemoveAll(filepath.Join(e.ProjectDir, name)); err != nil {
				e.t.Fatal(err)
			}
		}
	}
}
