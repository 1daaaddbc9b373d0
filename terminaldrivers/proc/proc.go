// Package proc reads Linux /proc: the process table, and per process its
// executable, arguments, working directory, start time, selected environment
// variables and open files. Root is a parameter so tests read a recorded tree.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// FS reads a /proc tree.
type FS struct {
	Root string // "/proc" when empty
}

func (fs FS) path(pid int, name string) string {
	root := fs.Root
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(root, strconv.Itoa(pid), name)
}

// Stat is the part of /proc/<pid>/stat AKK uses.
type Stat struct {
	PID     int
	Comm    string
	PPID    int
	PGRP    int
	Session int
	TTY     int // device number of the controlling terminal, 0 for none
	TPGID   int // foreground process group of that terminal, -1 for none
	// StartTicks is the start time in clock ticks after boot (field 22):
	// with the pid it names one process incarnation.
	StartTicks uint64
}

// Foreground reports whether the process is in the foreground process group
// of its controlling terminal: the program a person in that pane talks to.
func (s Stat) Foreground() bool { return s.TTY != 0 && s.TPGID > 0 && s.PGRP == s.TPGID }

// ParseStat parses the content of /proc/<pid>/stat. The command name is
// parenthesised and may itself hold spaces and parentheses, so fields are
// counted after the last ')'.
func ParseStat(b []byte) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	close := bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return Stat{}, fmt.Errorf("stat %q: no command name", b)
	}
	var s Stat
	var err error
	if s.PID, err = strconv.Atoi(strings.TrimSpace(string(b[:open]))); err != nil {
		return Stat{}, fmt.Errorf("stat pid: %w", err)
	}
	s.Comm = string(b[open+1 : close])
	// Fields after the name start at field 3 (state).
	f := strings.Fields(string(b[close+1:]))
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("stat of %d: %d fields after the name", s.PID, len(f))
	}
	ints := []*int{&s.PPID, &s.PGRP, &s.Session, &s.TTY, &s.TPGID} // fields 4-8
	for i, p := range ints {
		if *p, err = strconv.Atoi(f[1+i]); err != nil {
			return Stat{}, fmt.Errorf("stat of %d field %d: %w", s.PID, 4+i, err)
		}
	}
	if s.StartTicks, err = strconv.ParseUint(f[19], 10, 64); err != nil { // field 22
		return Stat{}, fmt.Errorf("stat of %d start time: %w", s.PID, err)
	}
	return s, nil
}

// Stat reads one process's stat.
func (fs FS) Stat(pid int) (Stat, error) {
	b, err := os.ReadFile(fs.path(pid, "stat"))
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b)
}

// Table is a snapshot of the process table: every process and its children.
type Table struct {
	stats    map[int]Stat
	children map[int][]int
}

// Snapshot reads the stat of every process. Processes that exit while it
// reads are skipped.
func (fs FS) Snapshot() (*Table, error) {
	root := fs.Root
	if root == "" {
		root = "/proc"
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read process table: %w", err)
	}
	t := &Table{stats: make(map[int]Stat, len(entries)), children: map[int][]int{}}
	buf := make([]byte, 4096)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := readSmall(filepath.Join(root, e.Name(), "stat"), buf)
		if err != nil {
			continue
		}
		s, err := ParseStat(b)
		if err != nil || s.PID != pid {
			continue
		}
		t.add(s)
	}
	return t, nil
}

// readSmall reads a file of at most len(buf) bytes with three system calls
// (open, read, close) where os.ReadFile makes five: a snapshot reads one
// per process, and a system call is not cheap in a virtual machine. A
// stat is far below a page; one that fills buf is an error.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	n, err := syscall.Read(fd, buf)
	for err == syscall.EINTR {
		n, err = syscall.Read(fd, buf)
	}
	switch {
	case err != nil:
		return nil, err
	case n >= len(buf):
		return nil, fmt.Errorf("%s: longer than %d bytes", path, len(buf))
	}
	return buf[:n], nil
}

// NewTable builds a table from stats (for tests and replays).
func NewTable(stats ...Stat) *Table {
	t := &Table{stats: map[int]Stat{}, children: map[int][]int{}}
	for _, s := range stats {
		t.add(s)
	}
	return t
}

func (t *Table) add(s Stat) {
	t.stats[s.PID] = s
	t.children[s.PPID] = append(t.children[s.PPID], s.PID)
}

// Stat returns the snapshot's stat of pid.
func (t *Table) Stat(pid int) (Stat, bool) {
	s, ok := t.stats[pid]
	return s, ok
}

// All returns every stat in the snapshot, in no particular order.
func (t *Table) All() []Stat {
	out := make([]Stat, 0, len(t.stats))
	for _, s := range t.stats {
		out = append(out, s)
	}
	return out
}

// Descendants returns pid and its descendants up to maxDepth generations
// below it, breadth first (parents before children, children by pid).
func (t *Table) Descendants(pid, maxDepth int) []int {
	if _, ok := t.stats[pid]; !ok {
		return nil
	}
	out := []int{pid}
	level := []int{pid}
	for depth := 0; depth < maxDepth && len(level) > 0; depth++ {
		var next []int
		for _, p := range level {
			kids := append([]int(nil), t.children[p]...)
			slices.Sort(kids)
			next = append(next, kids...)
		}
		out = append(out, next...)
		level = next
	}
	return out
}

// Exe returns the path of the process's executable. A binary replaced
// since the process started ends in " (deleted)".
func (fs FS) Exe(pid int) (string, error) { return os.Readlink(fs.path(pid, "exe")) }

// ExePath is the /proc link to the process's executable; os.Stat of it
// describes the binary the process runs, even after it was replaced.
func (fs FS) ExePath(pid int) string { return fs.path(pid, "exe") }

// Cwd returns the process's working directory.
func (fs FS) Cwd(pid int) (string, error) { return os.Readlink(fs.path(pid, "cwd")) }

// Cmdline returns the process's argument vector.
func (fs FS) Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(fs.path(pid, "cmdline"))
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte{0})
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(string(b), "\x00"), nil
}

// Environ returns the values of the named variables in the process's
// initial environment; variables it lacks are absent from the map.
func (fs FS) Environ(pid int, names ...string) (map[string]string, error) {
	b, err := os.ReadFile(fs.path(pid, "environ"))
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]string{}
	for _, kv := range bytes.Split(b, []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if ok && want[k] {
			out[k] = v
		}
	}
	return out, nil
}

// OpenFiles returns the targets of the process's open file descriptors,
// sorted by descriptor number.
func (fs FS) OpenFiles(pid int) ([]string, error) {
	dir := fs.path(pid, "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type fd struct {
		n      int
		target string
	}
	var fds []fd
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		fds = append(fds, fd{n, target})
	}
	slices.SortFunc(fds, func(a, b fd) int { return a.n - b.n })
	out := make([]string, len(fds))
	for i, f := range fds {
		out[i] = f.target
	}
	return out, nil
}

// BootID returns the kernel's boot id, which qualifies start times.
func (fs FS) BootID() (string, error) {
	root := fs.Root
	if root == "" {
		root = "/proc"
	}
	b, err := os.ReadFile(filepath.Join(root, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", errors.New("empty boot id")
	}
	return id, nil
}
