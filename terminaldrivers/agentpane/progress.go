package agentpane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
)

// markState is what a DurableMark holds, as JSON: where reading resumes
// and what is already proven about the turn. It carries the proof along,
// so the domain may store only the latest mark.
type markState struct {
	V  int       `json:"v"`
	At time.Time `json:"at"` // when the mark was taken
	// Files are the record files read so far: before acceptance every
	// candidate, after it only the one that holds the request.
	Files []fileMark `json:"files"`
	// Holder is the process whose open files may add candidates until
	// acceptance (Codex: the TUI or its app-server daemon); 0 when none.
	Holder      int    `json:"holder,omitempty"`
	HolderStart uint64 `json:"holder_start,omitempty"`
	// State is the agent's state file (see agent.TurnRules.IdleSince);
	// StateSeen its modification time when last read, IdleSince what it
	// said then (zero when not idle).
	State     string    `json:"state,omitempty"`
	StateSeen time.Time `json:"state_seen,omitzero"`
	IdleSince time.Time `json:"idle_since,omitzero"`
	// Foretold: the agent records a tool call before it asks anything
	// (agent.TurnRules.AsksForetold); a mark from before it was known
	// says false, the safe reading.
	Foretold bool `json:"foretold,omitempty"`

	// Early are entries read before the request's prompt: Claude Code may
	// append the prompt after the reply it caused, so on acceptance those
	// stamped at or after the prompt are the turn's.
	Early []earlyEntry `json:"early,omitempty"`

	Accepted     bool      `json:"accepted,omitempty"`
	PromptAt     time.Time `json:"prompt_at,omitzero"` // when the agent recorded the request
	Ambiguous    bool      `json:"ambiguous,omitempty"`
	Thread       string    `json:"thread,omitempty"`
	Turn         string    `json:"turn,omitempty"`
	Latest       string    `json:"latest,omitempty"`
	MessageID    string    `json:"message_id,omitempty"`
	MessageText  string    `json:"message_text,omitempty"` // the whole current assistant message
	Pending      *string   `json:"pending,omitempty"`      // an end_turn message awaiting the turn's end record
	Completed    bool      `json:"completed,omitempty"`
	Final        string    `json:"final,omitempty"`
	Failed       bool      `json:"failed,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	Interrupted  bool      `json:"interrupted,omitempty"`
	LastActivity time.Time `json:"last_activity,omitzero"`
	// Actions are the turn's latest two actions; LatestAt the record's
	// timestamp of its newest text or action.
	Actions  []actionMark `json:"actions,omitempty"`
	LatestAt time.Time    `json:"latest_at,omitzero"`
	// EndedAt is when the agent wrote the record that ended the turn.
	EndedAt time.Time `json:"ended_at,omitzero"`

	// fresh are the file changes read by this call (not kept in the mark:
	// the next call, from the mark it returns, reads past them).
	fresh []freshChange
}

type freshChange struct {
	agent.FileChange
	at time.Time
}

type actionMark struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
}

// action folds an action entry in: a start is added (the oldest of three
// dropped), an end updates the start it names (a failure is not undone by
// a later completion).
func (m *markState) action(e agent.Entry) {
	if e.Action != "" {
		m.Actions = append(m.Actions, actionMark{ID: e.ActionID, Type: e.Action, Status: e.ActionStatus})
		if len(m.Actions) > 2 {
			m.Actions = m.Actions[len(m.Actions)-2:]
		}
		return
	}
	for i := range m.Actions {
		if m.Actions[i].ID == e.ActionID && m.Actions[i].Status != agent.ActionFailed {
			m.Actions[i].Status = e.ActionStatus
		}
	}
}

type fileMark struct {
	Path   string `json:"path"`
	Thread string `json:"thread,omitempty"`
	Off    int64  `json:"off"`
	// New: first seen after the mark (a rollout opened later), read from
	// its start; only records written after the mark count.
	New bool `json:"new,omitempty"`
}

// earlyEntry is an entry read before acceptance, with its file.
type earlyEntry struct {
	File  string      `json:"file"`
	Entry agent.Entry `json:"entry"`
}

// maxEarly bounds the entries a mark keeps from before acceptance.
const maxEarly = 256

const markVersion = 1

// maxLatest bounds the latest assistant text a mark carries.
const maxLatest = 8 << 10

func (m *markState) ended() bool { return m.Completed || m.Failed || m.Interrupted }

func (m *markState) encode() (domain.DurableMark, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return domain.DurableMark(b), nil
}

func decodeMark(dm domain.DurableMark) (*markState, error) {
	var m markState
	if err := json.Unmarshal([]byte(dm), &m); err != nil {
		return nil, fmt.Errorf("durable mark: %w", err)
	}
	if m.V != markVersion {
		return nil, fmt.Errorf("durable mark version %d, want %d", m.V, markVersion)
	}
	return &m, nil
}

// Mark implements domain.TurnTerminal: after checking that the pane still
// runs the agent process t names, for each record file that may
// receive the next turn, the offset after its last complete line (0 for a
// file not written yet), and for Codex the process whose open rollouts may
// add files later.
func (x *Adapter) Mark(ctx context.Context, t domain.Terminal) (domain.DurableMark, error) {
	prof, err := x.turnProfile(t)
	if err != nil {
		return "", err
	}
	// The pane must still show the agent: a process the pane no longer
	// runs may linger a moment after it was replaced, and the mark is the
	// anchor every later reading trusts.
	if _, err := x.Observe(ctx, t.ID); err != nil {
		return "", err
	}
	p, err := x.process(t)
	if err != nil {
		return "", err
	}
	table, err := x.fs.Snapshot()
	if err != nil {
		return "", err
	}
	set, err := prof.TurnRules().Records(x.fs, table, p)
	if err != nil {
		return "", fmt.Errorf("locate the durable record: %w", err)
	}
	m := &markState{V: markVersion, At: x.now(), Holder: set.Holder, HolderStart: set.HolderStart, State: set.State,
		Foretold: prof.TurnRules().AsksForetold}
	for _, f := range set.Files {
		off, err := lineEnd(f.Path)
		if err != nil {
			return "", err
		}
		m.Files = append(m.Files, fileMark{Path: f.Path, Thread: f.ThreadID, Off: off})
	}
	return m.encode()
}

// lineEnd is the offset just after the last complete line of a file; 0
// when it does not exist yet.
func lineEnd(path string) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	const tail = 64 << 10
	start := max(0, size-tail)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return 0, err
	}
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		return start + int64(i) + 1, nil
	}
	if start == 0 {
		return 0, nil
	}
	return size, nil // one line longer than the tail: resume at the end
}

// ErrAmbiguous: the exact request appeared in more than one record file
// after the mark (several panes sharing one Codex daemon sent the same
// text); no thread is bound.
var ErrAmbiguous = errors.New("request found in more than one record after the mark")

// Progress implements domain.TurnTerminal. Each call stats the files it
// follows and parses only the complete lines written since the mark it is
// given; until acceptance that is every candidate (plus, for Codex,
// rollouts its holder opened since), after it only the file that holds the
// request.
func (x *Adapter) Progress(ctx context.Context, t domain.Terminal, dm domain.DurableMark, request string) (domain.TurnProgress, error) {
	m, err := decodeMark(dm)
	if err != nil {
		return domain.TurnProgress{Mark: dm}, err
	}
	if m.ended() {
		return m.progress(dm), nil
	}
	if m.Ambiguous {
		return m.progress(dm), ErrAmbiguous
	}
	prof, err := x.turnProfile(t)
	if err != nil {
		return m.progress(dm), err
	}
	rules := prof.TurnRules()
	// The agent's state file, read at every call: whether it says it
	// waits for the person.
	waiting := rules.Waiting != nil && m.State != "" && rules.Waiting(m.State, m.Thread)
	progress := func(dm domain.DurableMark) domain.TurnProgress {
		p := m.progress(dm)
		p.Waiting = waiting
		p.Changes = fileChanges(m.fresh, t.Project)
		return p
	}
	changed := false
	if !m.Accepted && m.Holder != 0 && rules.Held != nil {
		changed = x.addHeld(m, rules)
	}
	grew, err := x.read(m, rules, request)
	if err != nil {
		return progress(dm), err
	}
	// Only a turn that wrote nothing after its prompt can end unrecorded.
	quiet := func() bool {
		return m.Accepted && !m.ended() && m.State != "" && rules.IdleSince != nil && m.MessageID == "" && m.Latest == "" && m.Pending == nil
	}
	if quiet() {
		idleFor, seen := x.idleState(m, rules)
		changed = seen || changed
		if idleFor >= rules.IdleGrace {
			// The record is read again after the state: a reply the agent
			// wrote before it said idle is in it then. (Read only before,
			// a reader held up between the two reads on a busy machine
			// took a turn that had completed for one interrupted.)
			again, err := x.read(m, rules, request)
			if err != nil {
				return progress(dm), err
			}
			grew = grew || again
			if quiet() && x.now().Sub(m.LastActivity) >= rules.IdleGrace && x.requestBack(ctx, t, prof, request) {
				m.Interrupted, m.EndedAt, changed = true, m.IdleSince, true
			}
		}
	}
	if !changed && !grew {
		return progress(dm), nil
	}
	nm, err := m.encode()
	if err != nil {
		return progress(dm), err
	}
	if m.Ambiguous {
		return progress(nm), ErrAmbiguous
	}
	return progress(nm), nil
}

func (m *markState) publicActions() []domain.ProgressAction {
	var out []domain.ProgressAction
	for _, a := range m.Actions {
		out = append(out, domain.ProgressAction{Type: a.Type, Status: a.Status})
	}
	return out
}

func (m *markState) progress(dm domain.DurableMark) domain.TurnProgress {
	return domain.TurnProgress{
		Mark: dm, Accepted: m.Accepted, NativeThreadID: m.Thread, NativeTurnID: m.Turn,
		LatestText: m.Latest, LastActivity: m.LastActivity, Actions: m.publicActions(), LatestItemAt: m.LatestAt,
		Completed: m.Completed, FinalMessage: m.Final, Failed: m.Failed, FailureReason: m.Reason, Interrupted: m.Interrupted,
		AsksForetold: m.Foretold,
	}
}

// requestBack reports whether the pane's composer holds the request again
// (any text, for a Watch that knows none): how Claude Code shows a turn
// interrupted before any answer. Its state file saying idle and a quiet
// record are not enough: on a busy machine its transcript was seen to lag
// its state by more than ten seconds, the reply drawn and the composer
// empty, so a turn that completed would have been taken for interrupted.
func (x *Adapter) requestBack(ctx context.Context, t domain.Terminal, prof agent.TurnProfile, request string) bool {
	c, err := x.capture(ctx, t)
	if err != nil {
		return false
	}
	rows, ok := prof.ComposerText(c)
	if !ok || len(rows) == 0 {
		return false
	}
	// The composer holds it as Submit verified it typed (a long one as
	// the agent's paste placeholder).
	return request == "" || Holds(rows, request, prof.TurnRules().Placeholder)
}

// idleState reads the agent's state file (parsed only when it changed):
// how long it has said the agent is idle since after the request, or -1.
// The turn ended before any answer and without an end record (Claude
// Code, interrupted that early, puts the prompt back in the composer) once
// that and the record's quiet both last the profile's grace period. seen:
// the file changed.
func (x *Adapter) idleState(m *markState, rules agent.TurnRules) (idleFor time.Duration, seen bool) {
	if st, err := os.Stat(m.State); err == nil && !st.ModTime().Equal(m.StateSeen) {
		since, ok := rules.IdleSince(m.State, m.Thread)
		if !ok {
			since = time.Time{}
		}
		m.StateSeen, m.IdleSince, seen = st.ModTime(), since, true
	}
	if m.IdleSince.IsZero() || m.IdleSince.Before(m.PromptAt) {
		return -1, seen
	}
	return x.now().Sub(m.IdleSince), seen
}

// addHeld adds the record files the holder opened since the mark, while
// the holder is still the process the mark names.
func (x *Adapter) addHeld(m *markState, rules agent.TurnRules) bool {
	s, err := x.fs.Stat(m.Holder)
	if err != nil || s.StartTicks != m.HolderStart {
		return false
	}
	held, err := rules.Held(x.fs, m.Holder)
	if err != nil {
		return false
	}
	added := false
	for _, h := range held {
		if !slices.ContainsFunc(m.Files, func(f fileMark) bool { return f.Path == h.Path }) {
			m.Files = append(m.Files, fileMark{Path: h.Path, Thread: h.ThreadID, New: true})
			added = true
		}
	}
	return added
}

// chunk is what one file added since its offset: entries and the offset
// after the last complete line.
type chunk struct {
	file    int
	entries []agent.Entry
	end     int64
	match   int // index in entries of the request's prompt, -1 when absent
}

// maxChunk bounds one read of one file; the rest waits for the next call.
const maxChunk = 32 << 20

// read reads what the followed files added and applies it. It reports
// whether any offset moved.
func (x *Adapter) read(m *markState, rules agent.TurnRules, request string) (bool, error) {
	var chunks []chunk
	for i, f := range m.Files {
		c, ok, err := readChunk(f, rules.Parse)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		c.file, c.match = i, -1
		if !m.Accepted {
			notBefore := time.Time{}
			if f.New {
				notBefore = m.At.Truncate(time.Millisecond)
			}
			for j, e := range c.entries {
				// An empty request follows whatever prompt comes first: a
				// Watch anchored just before a task a person started.
				if e.Kind == agent.EntryUserPrompt && (request == "" || e.Text == request) && !e.Time.Before(notBefore) {
					c.match = j
					break
				}
			}
		}
		chunks = append(chunks, c)
	}
	if len(chunks) == 0 {
		return false, nil
	}
	if m.Accepted {
		c := chunks[0]
		m.apply(c.entries, x.now())
		m.Files[c.file].Off = c.end
		return true, nil
	}
	var found []chunk
	for _, c := range chunks {
		if c.match >= 0 {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		for _, c := range chunks {
			m.Files[c.file].Off = c.end
			m.keepEarly(m.Files[c.file].Path, c.entries)
		}
	case 1:
		c := found[0]
		f := m.Files[c.file]
		f.Off = c.end
		prompt := c.entries[c.match]
		m.keepEarly(f.Path, c.entries[:c.match])
		var early []agent.Entry
		for _, e := range m.Early {
			if e.File == f.Path && !e.Entry.Time.IsZero() && !e.Entry.Time.Before(prompt.Time) {
				early = append(early, e.Entry)
			}
		}
		slices.SortStableFunc(early, func(a, b agent.Entry) int { return a.Time.Compare(b.Time) })
		m.Early = nil
		m.Files = []fileMark{f}
		m.Holder, m.HolderStart = 0, 0
		m.Accepted, m.Thread, m.Turn = true, f.Thread, prompt.TurnID
		m.LastActivity = entryTime(prompt, x.now())
		m.PromptAt = m.LastActivity
		m.apply(early, x.now())
		m.apply(c.entries[c.match+1:], x.now())
	default:
		m.Ambiguous = true
	}
	return true, nil
}

// keepEarly keeps the entries of file that may belong to a turn whose
// prompt is not read yet.
func (m *markState) keepEarly(file string, entries []agent.Entry) {
	for _, e := range entries {
		if e.Kind != agent.EntryUserPrompt && !e.Time.IsZero() {
			m.Early = append(m.Early, earlyEntry{File: file, Entry: e})
		}
	}
	if len(m.Early) > maxEarly {
		m.Early = m.Early[len(m.Early)-maxEarly:]
	}
}

// readChunk parses the complete lines a file added after its offset. ok is
// false when it added none (or does not exist yet).
func readChunk(f fileMark, parse func([]byte) (agent.Entry, bool)) (chunk, bool, error) {
	st, err := os.Stat(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return chunk{}, false, nil
	}
	if err != nil {
		return chunk{}, false, err
	}
	if st.Size() <= f.Off {
		return chunk{}, false, nil
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return chunk{}, false, err
	}
	defer fh.Close()
	buf := make([]byte, min(st.Size()-f.Off, maxChunk))
	n, err := fh.ReadAt(buf, f.Off)
	if err != nil && err != io.EOF {
		return chunk{}, false, err
	}
	buf = buf[:n]
	last := bytes.LastIndexByte(buf, '\n')
	if last < 0 {
		if len(buf) == maxChunk {
			return chunk{}, false, fmt.Errorf("%s: a record line longer than %d bytes", f.Path, maxChunk)
		}
		return chunk{}, false, nil // a line still being written
	}
	c := chunk{end: f.Off + int64(last) + 1}
	for line := range bytes.SplitSeq(buf[:last], []byte{'\n'}) {
		if e, ok := parse(line); ok {
			c.entries = append(c.entries, e)
		}
	}
	return c, true, nil
}

func entryTime(e agent.Entry, now time.Time) time.Time {
	if e.Time.IsZero() {
		return now
	}
	return e.Time
}

// apply follows the accepted turn through entries, up to the first that
// ends it. Entries naming another native turn are not ours.
func (m *markState) apply(entries []agent.Entry, now time.Time) {
	for _, e := range entries {
		if m.ended() {
			return
		}
		if e.TurnID != "" && m.Turn != "" && e.TurnID != m.Turn && e.Kind != agent.EntryUserPrompt {
			continue
		}
		m.LastActivity = entryTime(e, now)
		if (e.Kind == agent.EntryAssistantText && e.Text != "") || e.Kind == agent.EntryAction {
			if !e.Time.IsZero() {
				m.LatestAt = e.Time
			}
		}
		switch e.Kind {
		case agent.EntryAction:
			m.action(e)
			if e.ActionStatus == agent.ActionCompleted {
				for _, c := range e.Changes {
					m.fresh = append(m.fresh, freshChange{c, e.Time})
				}
			}
		case agent.EntryAssistantText:
			switch {
			case e.MessageID != "" && e.MessageID == m.MessageID:
				if e.Text != "" {
					m.MessageText = join(m.MessageText, e.Text)
				}
			default:
				m.MessageID, m.MessageText = e.MessageID, e.Text
			}
			if m.MessageText != "" {
				m.Latest = bound(m.MessageText)
			}
			if e.EndTurn {
				final := m.MessageText
				m.Pending = &final
			}
		case agent.EntryCompleted:
			switch {
			case e.HasFinal:
				m.Completed, m.Final = true, e.Text
			case m.Pending != nil:
				m.Completed, m.Final = true, *m.Pending
			}
		case agent.EntryFailed:
			m.Failed, m.Reason = true, e.Text
		case agent.EntryInterrupted:
			m.Interrupted = true
		}
		if m.ended() {
			m.EndedAt = m.LastActivity
		}
	}
}

// fileChanges are the changes read, their paths relative to the pane's
// working folder when inside it.
func fileChanges(fresh []freshChange, project string) []domain.FileChange {
	var out []domain.FileChange
	name := func(p string) string {
		if project != "" && filepath.IsAbs(p) {
			if rel, err := filepath.Rel(project, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return rel
			}
		}
		return p
	}
	for _, c := range fresh {
		out = append(out, domain.FileChange{Path: name(c.Path), Op: domain.FileOp(c.Op), Diff: c.Diff(name), At: c.at})
	}
	return out
}

// join puts the text blocks of one message together, a paragraph apart.
func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

// bound keeps the last maxLatest bytes of s, on a rune boundary.
func bound(s string) string {
	if len(s) <= maxLatest {
		return s
	}
	cut := len(s) - maxLatest
	for cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut++
	}
	return s[cut:]
}
