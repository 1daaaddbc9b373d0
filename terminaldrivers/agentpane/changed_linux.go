package agentpane

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"akk/domain"
)

// Changed returns a channel that is closed as soon as a file the mark
// follows is written or created (the transcript or rollout, a record file
// not written yet, the agent's state file), so a caller waiting in a poll
// loop can call Progress at once. stop releases the watch; call it once
// the channel is closed or no longer wanted. It only wakes: Progress still
// decides what changed, and a caller keeps its poll (a Codex rollout that
// a daemon opens later, in a folder not watched, wakes nobody).
func (x *Adapter) Changed(dm domain.DurableMark) (changed <-chan struct{}, stop func(), err error) {
	m, err := decodeMark(dm)
	if err != nil {
		return nil, nil, err
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, nil, os.NewSyscallError("inotify_init1", err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	// Any event wakes, but one in the agent's state file's folder only
	// at an entry that matters (the file, or the next folder on the way
	// to it): every Claude Code writes its session record in that one
	// folder, by a rename, and another agent's wakes nobody. (A record's
	// folder still wakes at any new entry: a rollout the holder opens
	// there later is found at once.)
	named := map[int32]map[string]bool{}
	anyName := map[int32]bool{}
	watched := 0
	watch := func(path string, mask uint32) int32 {
		wd, err := syscall.InotifyAddWatch(fd, path, mask)
		if err != nil {
			return -1
		}
		watched++
		return int32(wd)
	}
	const written = syscall.IN_MODIFY | syscall.IN_CLOSE_WRITE
	const appeared = syscall.IN_CREATE | syscall.IN_MOVED_TO
	paths := []string{}
	for _, file := range m.Files {
		paths = append(paths, file.Path)
	}
	if m.State != "" {
		paths = append(paths, m.State)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			watch(p, written)
		}
		// The folder: a file not written yet, or rewritten by a rename.
		// A folder not made yet (Claude Code makes a project's folder with
		// its first transcript) is watched through its nearest existing
		// parent, whose new folder wakes the caller, who watches again.
		dir, next := filepath.Dir(p), filepath.Base(p)
		for {
			if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
				break
			}
			dir, next = filepath.Dir(dir), filepath.Base(dir)
		}
		switch wd := watch(dir, appeared); {
		case wd < 0:
		case p != m.State:
			anyName[wd] = true
		default:
			if named[wd] == nil {
				named[wd] = map[string]bool{}
			}
			named[wd][next] = true
		}
	}
	if watched == 0 {
		f.Close()
		return nil, nil, errors.New("nothing to watch for this mark")
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		buf := make([]byte, 16<<10)
		for {
			n, err := f.Read(buf) // events, or the close by stop
			if err != nil || n <= 0 || matters(buf[:n], named, anyName) {
				return
			}
		}
	}()
	return ch, func() { f.Close() }, nil
}

// matters reports whether one of the inotify events in b wakes the caller:
// any but one in a folder of named (by watch) whose entry it does not
// name, unless the folder's watch ended or is in anyName.
func matters(b []byte, named map[int32]map[string]bool, anyName map[int32]bool) bool {
	for len(b) >= syscall.SizeofInotifyEvent {
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&b[0]))
		size := syscall.SizeofInotifyEvent + int(ev.Len)
		if size > len(b) {
			return true // cut short: wake rather than miss
		}
		name := string(bytes.TrimRight(b[syscall.SizeofInotifyEvent:size], "\x00"))
		b = b[size:]
		names, filtered := named[ev.Wd]
		if !filtered || anyName[ev.Wd] || ev.Mask&(syscall.IN_Q_OVERFLOW|syscall.IN_IGNORED) != 0 || names[name] {
			return true
		}
	}
	return false
}
