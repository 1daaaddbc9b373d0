package agentpane

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
)

var _ domain.WatchTerminal = (*Adapter)(nil)

// maxAnchorScan bounds how much of a record AnchorWatch reads back.
const maxAnchorScan = 8 << 20

// AnchorWatch looks for the open prompt anchorTries more times, anchorPause apart.
const (
	anchorTries = 15
	anchorPause = 100 * time.Millisecond
)

// endOf is the offset after a record's last complete line, 0 when unreadable.
func endOf(path string) int64 {
	off, _ := lineEnd(path)
	return off
}

// AnchorWatch implements domain.WatchTerminal. When the agent's record is
// one known file whose last user prompt has no end after it, the mark sits
// just before that prompt and the Watch is exact: Progress(t, mark, "")
// follows that very task. Otherwise (several candidate files, a record held
// by a process other panes share, as Codex 0.169.0's app-server daemon, or
// no open task in the record) the mark is the end of the record and the
// Watch is best effort.
func (x *Adapter) AnchorWatch(ctx context.Context, t domain.Terminal) (domain.DurableMark, bool, error) {
	end, err := x.Mark(ctx, t)
	if err != nil {
		return "", false, err
	}
	m, err := decodeMark(end)
	// One record file, held (if at all) by the pane's own agent process:
	// a holder shared with other panes (Codex's app-server daemon) cannot
	// prove which task is this pane's.
	if err != nil || len(m.Files) != 1 || (m.Holder != 0 && m.Holder != t.Process.PID) {
		return end, false, err
	}
	return x.anchorOn(ctx, t, end, m, m.Files[0])
}

// anchorOn anchors a Watch on the open task in file f: the mark becomes f
// alone, from that task's prompt. Without an open prompt the mark end is
// kept (best effort).
func (x *Adapter) anchorOn(ctx context.Context, t domain.Terminal, end domain.DurableMark, m *markState, f fileMark) (domain.DurableMark, bool, error) {
	prof, err := x.turnProfile(t)
	if err != nil {
		return end, false, err
	}
	// The agent may write its prompt record a little after the screen shows
	// it working (Claude Code appends records ~100 ms late): look again for a
	// bounded while before settling for best effort.
	var off int64
	ok := false
	for try := 0; ; try++ {
		if off, ok, err = openPrompt(f.Path, endOf(f.Path), prof.TurnRules().Parse); err != nil || ok || try >= anchorTries {
			break
		}
		if err := x.sleep(ctx, anchorPause); err != nil {
			return end, false, err
		}
	}
	if err != nil || !ok {
		return end, false, err
	}
	f.Off = off
	m.Files = []fileMark{f}
	m.Holder, m.HolderStart = 0, 0 // the task's file is known: no other may be added
	dm, err := m.encode()
	return dm, err == nil, err
}

// AnchorWatchThread implements domain.ThreadAnchor: the Watch anchors on
// the open task of thread threadID, one of the record files the pane's
// agent (or the daemon holding its threads) has open now. A thread with no
// such file, or no open task in it, keeps the best-effort end mark.
func (x *Adapter) AnchorWatchThread(ctx context.Context, t domain.Terminal, threadID string) (domain.DurableMark, bool, error) {
	end, err := x.Mark(ctx, t)
	if err != nil {
		return "", false, err
	}
	m, err := decodeMark(end)
	if err != nil {
		return end, false, err
	}
	for _, f := range m.Files {
		if f.Thread == threadID {
			return x.anchorOn(ctx, t, end, m, f)
		}
	}
	return end, false, nil
}

// openPrompt finds, in the record up to end, the offset of the last user
// prompt line that no completion, failure or interrupt follows.
func openPrompt(path string, end int64, parse func([]byte) (agent.Entry, bool)) (int64, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Not written yet: Claude Code names a new session in its session
		// record a moment before it creates the transcript.
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	start := max(0, end-maxAnchorScan)
	r := bufio.NewReaderSize(io.NewSectionReader(f, start, end-start), 64<<10)
	off, prompt, open := start, int64(-1), false
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if e, ok := parse(bytes.TrimRight(line, "\n")); ok {
				switch e.Kind {
				case agent.EntryUserPrompt:
					prompt, open = off, true
				case agent.EntryCompleted, agent.EntryFailed, agent.EntryInterrupted:
					open = false
				}
			}
		}
		off += int64(len(line))
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, false, err
		}
	}
	if start > 0 && prompt == start {
		return 0, false, nil // the scan may have begun inside a line
	}
	return prompt, open && prompt >= 0, nil
}
