package agent

import (
	"bufio"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"akk/domain"
)

// ThreadHeadBytes bounds how much of one record file a thread listing
// reads: the first request is near the start.
const ThreadHeadBytes = 512 << 10

// MaxThreadFiles bounds how many record files one listing opens.
const MaxThreadFiles = 2000

// NewestFiles keeps the n most recently written of files (all when there
// are no more than n), oldest first. Record files named by a random id say
// nothing of their age by their names; their modification times do.
func NewestFiles(files []string, n int) []string {
	if len(files) <= n {
		return files
	}
	type aged struct {
		path string
		mod  time.Time
	}
	all := make([]aged, 0, len(files))
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			continue // gone meanwhile
		}
		all = append(all, aged{f, st.ModTime()})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].mod.Before(all[j].mod) })
	if len(all) > n {
		all = all[len(all)-n:]
	}
	out := make([]string, len(all))
	for i, a := range all {
		out[i] = a.path
	}
	return out
}

// FirstRequest reads a record file from its start until first returns a
// request (ok), within ThreadHeadBytes. first is given each line.
func FirstRequest(path string, first func(line []byte) (text string, ok bool)) (string, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", time.Time{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", time.Time{}, err
	}
	sc := bufio.NewScanner(io.LimitReader(f, ThreadHeadBytes))
	sc.Buffer(make([]byte, 64<<10), ThreadHeadBytes)
	for sc.Scan() {
		if text, ok := first(sc.Bytes()); ok {
			return text, st.ModTime(), nil
		}
	}
	return "", st.ModTime(), sc.Err()
}

// Typed reports whether a user record's text is what a person typed (not a
// wrapper the agent adds: <command-name>, <environment_context>, caveats,
// instructions files).
func Typed(text string) bool {
	t := strings.TrimSpace(text)
	return t != "" && utf8.ValidString(t) && !strings.HasPrefix(t, "<") && !strings.HasPrefix(t, "Caveat:") &&
		!strings.HasPrefix(t, "# AGENTS.md")
}

// ThreadReader is implemented by drivers that list the native threads of
// a process's project from their records.
type ThreadReader interface {
	Threads(p Process) ([]domain.NativeThread, error)
}
