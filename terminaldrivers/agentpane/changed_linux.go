package agentpane

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

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
	watched := 0
	watch := func(path string, mask uint32) {
		if _, err := syscall.InotifyAddWatch(fd, path, mask); err == nil {
			watched++
		}
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
		dir := filepath.Dir(p)
		for {
			if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
				break
			}
			dir = filepath.Dir(dir)
		}
		watch(dir, appeared)
	}
	if watched == 0 {
		f.Close()
		return nil, nil, errors.New("nothing to watch for this mark")
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		buf := make([]byte, 4096)
		_, _ = f.Read(buf) // any event, or the close by stop
	}()
	return ch, func() { f.Close() }, nil
}
