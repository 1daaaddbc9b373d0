package codexappserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/proc"
)

// Backend implements domain.ThreadTransport: the managed daemons of the Codex
// panes AKK sees (found from each agent's CODEX_HOME), driven as one more
// client. It never starts a daemon.
type Backend struct {
	Proc    proc.FS
	Version string        // AKK's, named to the daemon
	Timeout time.Duration // to list one daemon's threads; 0: 3 s
	// Homes are Codex homes the operator named: their daemons are asked
	// for threads even when no pane runs a Codex of that home (the TUI
	// quit and its daemon runs on: "Any running work continues").
	Homes []string

	mu      sync.Mutex
	started map[string]*following // by native turn id: the connection that started it, until Follow takes it
	prompts map[string]*prompt    // by native turn id: the approval its follower waits on
	// ephemeral are the threads known to be ephemeral helpers (never a
	// conversation; reading one costs the daemon tens of ms), by home.
	// (A listing dials afresh each time: a connection kept open between
	// listings was seen to have the daemon interrupt a turn another
	// connection started, on 0.159.2 and 0.171.0.)
	ephemeral map[string]map[string]bool
}

func (b *Backend) isEphemeral(home, id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ephemeral[home][id]
}

func (b *Backend) markEphemeral(home, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ephemeral == nil {
		b.ephemeral = map[string]map[string]bool{}
	}
	if b.ephemeral[home] == nil {
		b.ephemeral[home] = map[string]bool{}
	}
	b.ephemeral[home][id] = true
}

// prompt is a command approval or a question a followed turn waits on.
type prompt struct {
	f        *following
	req      Message
	command  string            // a command approval's command
	question *UserInputRequest // a question's request
	resolved chan struct{}     // closed when the daemon says it needs no answer
}

// following is a connection subscribed to a thread's messages.
type following struct {
	c    *Client
	ch   chan Message
	stop func()
}

func (f *following) close() {
	f.stop()
	f.c.Close()
}

// homes are the configured Codex homes and those of terms' Codex agents,
// each once, with the panes of each home whose Codex hands its threads to
// the home's daemon.
func (b *Backend) homes(terms []domain.Terminal) ([]string, map[string][]domain.Terminal) {
	out := slices.Clone(b.Homes)
	panes := map[string][]domain.Terminal{}
	for _, t := range terms {
		if t.Agent.Kind != domain.AgentCodex || t.Process.PID == 0 {
			continue
		}
		st, err := b.Proc.Stat(t.Process.PID)
		if err != nil || st.StartTicks != t.Process.StartTicks {
			continue
		}
		env, err := b.Proc.Environ(t.Process.PID, "CODEX_HOME", "HOME")
		if err != nil {
			continue
		}
		home, ok := codex.Home(env)
		if !ok {
			continue
		}
		if !slices.Contains(out, home) {
			out = append(out, home)
		}
		if slices.Contains(codex.DaemonVersions(), t.Agent.Version) {
			panes[home] = append(panes[home], t)
		}
	}
	return out, panes
}

// titleThread is a thread id in a pane title, or the start of one: Codex's
// title item "thread-id" shows 29 characters and "...".
var titleThread = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{1,12}`)

// TitleThread is the thread id, or its start, that a pane title shows:
// a whole id, or one cut short with an ellipsis after at least its first
// four groups; exactly one in the title, else "" (nothing proven).
func TitleThread(title string) (id string, whole bool) {
	n := 0
	for _, m := range titleThread.FindAllStringIndex(title, -1) {
		before, after := title[:m[0]], title[m[1]:]
		if before != "" && strings.ContainsAny(before[len(before)-1:], "0123456789abcdef-") {
			continue // part of a longer run
		}
		full := m[1]-m[0] == 36
		switch {
		case full && (after == "" || !strings.ContainsAny(after[:1], "0123456789abcdef-")):
			id, whole = title[m[0]:m[1]], true
		case !full && (strings.HasPrefix(after, "...") || strings.HasPrefix(after, "…")):
			id, whole = title[m[0]:m[1]], false
		default:
			continue
		}
		n++
	}
	if n != 1 {
		return "", false
	}
	return id, whole
}

// paneThreads proves which loaded thread each pane shows: its Codex names
// the thread in the pane title (the TUI's [tui] terminal_title item
// "thread-id", updated whenever it changes threads and cleared when it
// quits), and exactly one of the daemon's loaded threads has that id (or
// starts with its shown start). A thread two panes show is no pane's.
func paneThreads(panes []domain.Terminal, loaded []string) map[string]string {
	claims := map[string][]string{}
	for _, t := range panes {
		id, whole := TitleThread(t.Title)
		if id == "" {
			continue
		}
		var match []string
		for _, l := range loaded {
			if l == id || (!whole && strings.HasPrefix(l, id)) {
				match = append(match, l)
			}
		}
		if len(match) == 1 {
			claims[match[0]] = append(claims[match[0]], t.ID)
		}
	}
	out := map[string]string{}
	for th, ts := range claims {
		if len(ts) == 1 {
			out[th] = ts[0]
		}
	}
	return out
}

func (b *Backend) timeout() time.Duration {
	if b.Timeout > 0 {
		return b.Timeout
	}
	return 3 * time.Second
}

// threadStatus maps the daemon's thread status to the domain's.
func threadStatus(s string) string {
	switch s {
	case "idle":
		return domain.BackendIdle
	case "active":
		return domain.BackendActive
	case "notLoaded":
		return "not_loaded"
	}
	return "system_error"
}

// Threads implements domain.ThreadTransport: the loaded threads of each
// daemon that have a record (a thread is followable once its first turn
// wrote its rollout; ephemeral helpers never are). A daemon that cannot
// be reached lists nothing.
func (b *Backend) Threads(ctx context.Context, terms []domain.Terminal) ([]domain.BackendThread, error) {
	var out []domain.BackendThread
	var errs []error
	homes, panes := b.homes(terms)
	for _, home := range homes {
		ths, err := b.daemonThreads(ctx, home, panes[home])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, ths...)
	}
	if len(out) > 0 {
		return out, nil
	}
	return nil, errors.Join(errs...)
}

func (b *Backend) daemonThreads(ctx context.Context, home string, panes []domain.Terminal) ([]domain.BackendThread, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout())
	defer cancel()
	c, err := Dial(ctx, SocketPath(home), b.Version)
	if err != nil {
		return nil, nil // no daemon for this home (an older Codex, or it stopped): nothing to list
	}
	defer c.Close()
	ids, err := c.LoadedThreads(ctx)
	if err != nil {
		return nil, err
	}
	shown := paneThreads(panes, ids)
	var out []domain.BackendThread
	for _, id := range ids {
		if b.isEphemeral(home, id) {
			continue
		}
		th, err := c.ReadThread(ctx, id, false)
		if err != nil {
			continue // unloaded meanwhile
		}
		if th.Ephemeral {
			b.markEphemeral(home, id) // a thread is ephemeral for life
			continue
		}
		if th.Path == nil || *th.Path == "" {
			continue
		}
		bt := domain.BackendThread{ThreadID: th.ID, Home: home, Cwd: th.Cwd, CLIVersion: th.CLIVersion, Status: threadStatus(th.Status.Type),
			PaneTerminalID: shown[th.ID]}
		if !Checked(th.CLIVersion) {
			bt.Warnings = append(bt.Warnings, uncheckedWarning(th.CLIVersion))
		}
		if th.Name != nil && strings.TrimSpace(*th.Name) != "" {
			bt.Title = strings.TrimSpace(*th.Name)
		} else {
			bt.Title = firstLine(th.Preview, 120)
		}
		if th.Model != nil {
			bt.Model = *th.Model
		}
		out = append(out, bt)
	}
	return out, nil
}

// firstLine is the first line of s, at most n code points.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// follow connects to th's daemon subscribed to every message, then makes
// the connection a subscriber of the thread.
func (b *Backend) follow(ctx context.Context, th domain.BackendThread) (*following, error) {
	c, err := Dial(ctx, SocketPath(th.Home), b.Version)
	if err != nil {
		return nil, err
	}
	f := &following{c: c, ch: make(chan Message, 4096)}
	f.stop = c.Subscribe(f.ch)
	if _, err := c.Follow(ctx, th.ThreadID); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// Start implements domain.ThreadTransport. An answer of the daemon's, an
// error included, proves what happened; a connection lost after the
// request went out does not.
func (b *Backend) Start(ctx context.Context, th domain.BackendThread, text, messageID string, opts domain.BackendTurnOptions) (string, domain.SubmitStage, error) {
	f, err := b.follow(ctx, th)
	if err != nil {
		var rpc *RPCError
		if !errors.As(err, &rpc) || !b.unrecorded(ctx, th) {
			return "", domain.SubmitNothing, err
		}
		// A thread no turn ran in yet has no record the daemon could
		// subscribe a second client to: the turn starts on a plain
		// connection, and Follow subscribes once the turn wrote it.
		return b.startUnrecorded(ctx, th, text, messageID, opts)
	}
	turn, err := f.c.StartTurn(ctx, th.ThreadID, text, messageID, opts.Model, opts.Effort)
	var rpc *RPCError
	switch {
	case errors.As(err, &rpc):
		f.close()
		return "", domain.SubmitNothing, err // the daemon refused it: no turn
	case err != nil || turn.ID == "":
		f.close()
		if err == nil {
			err = errors.New("the daemon answered turn/start without a turn")
		}
		return "", domain.SubmitPasted, err
	}
	b.mu.Lock()
	if b.started == nil {
		b.started = map[string]*following{}
	}
	b.started[turn.ID] = f
	b.mu.Unlock()
	// Handed to Follow; a turn nobody follows within a minute lets go.
	time.AfterFunc(time.Minute, func() {
		if f := b.take(turn.ID); f != nil {
			f.close()
		}
	})
	return turn.ID, domain.SubmitEntered, nil
}

// unrecorded says th is loaded and has no record yet (its rollout file is
// not written before its first turn).
func (b *Backend) unrecorded(ctx context.Context, th domain.BackendThread) bool {
	c, err := Dial(ctx, SocketPath(th.Home), b.Version)
	if err != nil {
		return false
	}
	defer c.Close()
	cur, err := c.ReadThread(ctx, th.ThreadID, false)
	if err != nil || cur.Path == nil || *cur.Path == "" {
		return false
	}
	_, err = os.Stat(*cur.Path)
	return errors.Is(err, fs.ErrNotExist)
}

// startUnrecorded starts the first turn of a thread with no record.
func (b *Backend) startUnrecorded(ctx context.Context, th domain.BackendThread, text, messageID string, opts domain.BackendTurnOptions) (string, domain.SubmitStage, error) {
	c, err := Dial(ctx, SocketPath(th.Home), b.Version)
	if err != nil {
		return "", domain.SubmitNothing, err
	}
	defer c.Close()
	turn, err := c.StartTurn(ctx, th.ThreadID, text, messageID, opts.Model, opts.Effort)
	var rpc *RPCError
	switch {
	case errors.As(err, &rpc):
		return "", domain.SubmitNothing, err
	case err != nil || turn.ID == "":
		if err == nil {
			err = errors.New("the daemon answered turn/start without a turn")
		}
		return "", domain.SubmitPasted, err
	}
	return turn.ID, domain.SubmitEntered, nil
}

// followRecorded is follow for a turn that started. The daemon refuses to
// subscribe a second client to a thread whose first turn just started (no
// record yet, then "list_turns is not supported yet" until that turn
// ends): its refusals are asked again until the timeout. Catching up after
// the turn ended is Follow's.
func (b *Backend) followRecorded(ctx context.Context, th domain.BackendThread) (*following, error) {
	for {
		f, err := b.follow(ctx, th)
		var rpc *RPCError
		if err == nil || !errors.As(err, &rpc) {
			return f, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (b *Backend) take(turnID string) *following {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.started[turnID]
	delete(b.started, turnID)
	return f
}

// Follow implements domain.ThreadTransport.
func (b *Backend) Follow(ctx context.Context, th domain.BackendThread, turnID string) (<-chan domain.Observation, error) {
	f := b.take(turnID)
	// The connection that started the turn was subscribed before it
	// started: every message of the turn reaches it, and there is nothing
	// to catch up on. A fresh connection reads first whether the turn
	// ended before it followed.
	fresh := f == nil
	if fresh {
		var err error
		dctx, cancel := context.WithTimeout(ctx, 10*b.timeout())
		f, err = b.followRecorded(dctx, th)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	t := &turnFollower{b: b, f: f, threadID: th.ThreadID, turnID: turnID, cwd: th.Cwd, out: make(chan domain.Observation, 16)}
	go func() {
		defer close(t.out)
		defer f.close()
		// A turn that ended before this connection followed it ends here.
		if fresh {
			if ev, ended := b.endedBefore(ctx, f, th.ThreadID, turnID); ended {
				t.emit(ctx, ev)
				return
			}
		}
		defer func() {
			if t.pending != nil {
				b.setPrompt(turnID, nil)
			}
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case <-f.c.Done():
				why := "the connection ended"
				if err := f.c.Err(); err != nil {
					why = err.Error()
				}
				t.emit(ctx, domain.BackendEvent{Kind: domain.BackendGone, Text: why})
				return
			case m := <-f.ch:
				if !t.message(ctx, m) {
					return
				}
			}
		}
	}()
	return t.out, nil
}

// turnFollower turns the messages of one followed turn into its events,
// handed on as the observations they make.
type turnFollower struct {
	b                *Backend
	f                *following
	threadID, turnID string
	cwd              string // the thread's folder: changed files are named from it
	out              chan domain.Observation
	pending          *prompt // the approval or question that waits
	final            string  // the turn's last agent message so far
}

// emit hands ev on as the observation it makes; false when the follower
// ends (ev ends the turn, or ctx ended).
func (t *turnFollower) emit(ctx context.Context, ev domain.BackendEvent) bool {
	select {
	case t.out <- ev.Observation(domain.CodexThreads.Name):
		return !ev.Ends()
	case <-ctx.Done():
		return false
	}
}

// message folds one message of the daemon; false: the follower ends.
func (t *turnFollower) message(ctx context.Context, m Message) bool {
	switch m.Method {
	case MethodCommandApproval:
		if a, ok := ParseCommandApproval(m); ok && a.ThreadID == t.threadID && a.TurnID == t.turnID {
			cmd := ""
			if a.Command != nil {
				cmd = *a.Command
			}
			t.wait(&prompt{f: t.f, req: m, command: cmd, resolved: make(chan struct{})})
			return t.emit(ctx, domain.BackendEvent{Kind: domain.BackendApproval, Text: cmd})
		}
	case MethodUserInput:
		if r, ok := ParseUserInput(m); ok && r.ThreadID == t.threadID && r.TurnID == t.turnID {
			t.wait(&prompt{f: t.f, req: m, question: &r, resolved: make(chan struct{})})
			return t.emit(ctx, domain.BackendEvent{Kind: domain.BackendQuestion})
		}
	case MethodResolved:
		if r, ok := ParseResolved(m); ok && t.pending != nil && r.Resolves(t.pending.req) {
			close(t.pending.resolved)
			t.wait(nil)
			return t.emit(ctx, domain.BackendEvent{Kind: domain.BackendResolved})
		}
	case "item/completed":
		var ev ItemEvent
		if json.Unmarshal(m.Params, &ev) != nil || ev.ThreadID != t.threadID || ev.TurnID != t.turnID {
			break
		}
		switch {
		case ev.Item.Type == "agentMessage":
			t.final = ev.Item.Text
			return t.emit(ctx, domain.BackendEvent{Kind: domain.BackendProgress, Text: ev.Item.Text})
		case ev.Item.Type == "fileChange" && ev.Item.Status == "completed":
			// A patch applied: the files it changed, as the daemon states them.
			if cs := ev.Item.FileChanges(t.cwd); len(cs) > 0 {
				return t.emit(ctx, domain.BackendEvent{Kind: domain.BackendChanges, Changes: cs})
			}
		}
	case "turn/completed":
		var ev TurnEvent
		if json.Unmarshal(m.Params, &ev) == nil && ev.ThreadID == t.threadID && ev.Turn.ID == t.turnID {
			if end, ended := turnEnd(ev.Turn, t.final); ended {
				if end.Kind == domain.BackendCompleted && end.Text == "" {
					// Its last message came before this connection
					// followed: the record has it.
					end.Text = t.b.finalMessage(ctx, t.f, t.threadID, t.turnID)
				}
				t.emit(ctx, end)
				return false
			}
		}
	}
	return true
}

// wait records p as what the turn waits on (nil: nothing).
func (t *turnFollower) wait(p *prompt) {
	t.pending = p
	t.b.setPrompt(t.turnID, p)
}

// settleInterrupted bounds how long a turn a read calls interrupted, on a
// thread that is not active, with no abort in its record, is read again
// before AKK takes the daemon's word: a daemon that restarted holds no
// running turn and writes no abort.
const settleInterrupted = 10 * time.Second

// endedBefore reads whether the turn ended before f followed it. A turn the
// daemon's read calls interrupted may still run: the daemon reports every
// turn in progress as interrupted while the thread's status is not active,
// and a turn just started is in its record before the thread turns active
// (seen on 0.171.0 with a controller listing often: the turn went on to
// complete). So interrupted is believed when the thread is active (the
// status is then the turn's own), when the record holds the turn's abort,
// or when the thread stays inactive with the turn unfinished for
// settleInterrupted; until then the thread is read again.
func (b *Backend) endedBefore(ctx context.Context, f *following, threadID, turnID string) (domain.BackendEvent, bool) {
	var since time.Time
	for {
		rctx, cancel := context.WithTimeout(ctx, b.timeout())
		cur, err := f.c.ReadThread(rctx, threadID, true)
		cancel()
		if err != nil {
			return domain.BackendEvent{}, false // the messages tell
		}
		var ev domain.BackendEvent
		ended := false
		for _, t := range cur.Turns {
			if t.ID == turnID {
				ev, ended = turnEnd(t, "")
			}
		}
		if !ended {
			return domain.BackendEvent{}, false
		}
		if ev.Kind != domain.BackendInterrupted || cur.Status.Type == "active" ||
			(cur.Path != nil && recordedAbort(*cur.Path, turnID)) {
			return ev, true
		}
		if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) >= settleInterrupted {
			return ev, true
		}
		select {
		case <-ctx.Done():
			return domain.BackendEvent{}, false
		case <-f.c.Done():
			return domain.BackendEvent{}, false // the loop reports the connection's end
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// recordedAbort says the rollout at path records the turn's abort.
func recordedAbort(path, turnID string) bool {
	lines, err := agent.TailLines(path, 4<<20)
	if err != nil {
		return false
	}
	for _, l := range lines {
		if e, ok := codex.ParseRolloutLine(l); ok && e.Kind == agent.EntryInterrupted && e.TurnID == turnID {
			return true
		}
	}
	return false
}

// finalMessage reads a completed turn's last agent message from the thread.
func (b *Backend) finalMessage(ctx context.Context, f *following, threadID, turnID string) string {
	ctx, cancel := context.WithTimeout(ctx, b.timeout())
	defer cancel()
	cur, err := f.c.ReadThread(ctx, threadID, true)
	if err != nil {
		return ""
	}
	for _, t := range cur.Turns {
		if t.ID == turnID {
			return t.FinalMessage()
		}
	}
	return ""
}

// turnEnd is the event a turn's end is, when it ended; final is its last
// agent message seen on the way (the turn's own items win).
func turnEnd(t Turn, final string) (domain.BackendEvent, bool) {
	switch t.Status {
	case "completed":
		if f := t.FinalMessage(); f != "" {
			final = f
		}
		return domain.BackendEvent{Kind: domain.BackendCompleted, Text: final}, true
	case "interrupted":
		return domain.BackendEvent{Kind: domain.BackendInterrupted}, true
	case "failed":
		why := "the turn failed"
		if t.Error != nil && t.Error.Message != "" {
			why = t.Error.Message
		}
		return domain.BackendEvent{Kind: domain.BackendFailed, Text: why}, true
	}
	return domain.BackendEvent{}, false
}

// RunningTurn implements domain.ThreadTransport: the thread's turn in
// progress, as its record lists it.
func (b *Backend) RunningTurn(ctx context.Context, th domain.BackendThread) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout())
	defer cancel()
	c, err := Dial(ctx, SocketPath(th.Home), b.Version)
	if err != nil {
		return "", err
	}
	defer c.Close()
	cur, err := c.ReadThread(ctx, th.ThreadID, true)
	if err != nil {
		return "", err
	}
	for i := len(cur.Turns) - 1; i >= 0; i-- {
		if cur.Turns[i].Status == "inProgress" {
			return cur.Turns[i].ID, nil
		}
	}
	return "", nil
}

// Models implements domain.ThreadTransport: the daemon's catalogue and the
// model and effort the thread's next turn gets. An effort the thread
// leaves unset is its model's default, which is what the daemon applies;
// a thread whose daemon names no model has neither.
func (b *Backend) Models(ctx context.Context, th domain.BackendThread) (domain.ModelState, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout())
	defer cancel()
	c, err := Dial(ctx, SocketPath(th.Home), b.Version)
	if err != nil {
		return domain.ModelState{}, err
	}
	defer c.Close()
	cur, err := c.ReadThread(ctx, th.ThreadID, false)
	if err != nil {
		return domain.ModelState{}, err
	}
	models, err := c.ListModels(ctx)
	if err != nil {
		return domain.ModelState{}, err
	}
	st := domain.ModelState{Models: catalogue(models)}
	if cur.Model != nil {
		st.Model = *cur.Model
	}
	for _, m := range models {
		if modelName(m) == st.Model {
			st.Effort = m.DefaultReasoningEffort
		}
	}
	if cur.ReasoningEffort != nil && *cur.ReasoningEffort != "" {
		st.Effort = *cur.ReasoningEffort
	}
	if st.Model == "" {
		st.Effort = ""
	}
	return st, nil
}

// Catalogue implements domain.ThreadTransport: model/list alone.
func (b *Backend) Catalogue(ctx context.Context, th domain.BackendThread) ([]domain.ModelOption, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout())
	defer cancel()
	c, err := Dial(ctx, SocketPath(th.Home), b.Version)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	models, err := c.ListModels(ctx)
	if err != nil {
		return nil, err
	}
	return catalogue(models), nil
}

// modelName is the name a turn's model override takes.
func modelName(m Model) string {
	if m.Model != "" {
		return m.Model
	}
	return m.ID
}

// catalogue is model/list's answer as model options, each with all its
// efforts.
func catalogue(models []Model) []domain.ModelOption {
	out := []domain.ModelOption{}
	for _, m := range models {
		o := domain.ModelOption{Model: modelName(m), Label: m.DisplayName, Efforts: []string{}}
		if o.Label == "" {
			o.Label = o.Model
		}
		for _, e := range m.SupportedReasoningEfforts {
			o.Efforts = append(o.Efforts, e.ReasoningEffort)
		}
		out = append(out, o)
	}
	return out
}

// Interrupt implements domain.ThreadTransport.
func (b *Backend) Interrupt(ctx context.Context, th domain.BackendThread, turnID string) error {
	f, err := b.follow(ctx, th)
	if err != nil {
		return err
	}
	defer f.close()
	return f.c.InterruptTurn(ctx, th.ThreadID, turnID)
}

func (b *Backend) setPrompt(turnID string, p *prompt) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.prompts == nil {
		b.prompts = map[string]*prompt{}
	}
	if p == nil {
		delete(b.prompts, turnID)
		return
	}
	b.prompts[turnID] = p
}

func (b *Backend) prompt(turnID string) *prompt {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.prompts[turnID]
}

// fingerprint names one approval request of one turn exactly: the daemon's
// request id (unique on the connection that follows the turn), the turn
// and the whole command.
func (p *prompt) fingerprint(turnID string) string {
	sum := sha256.Sum256([]byte(turnID + "\x00" + string(p.req.ID) + "\x00" + p.command + "\x00" + string(p.req.Params)))
	return "cxapproval:" + hex.EncodeToString(sum[:])
}

// Prompt implements domain.ThreadTransport: the command approval the turn's
// follower waits on now.
func (b *Backend) Prompt(turnID string) (domain.ApprovalPrompt, bool) {
	p := b.prompt(turnID)
	if p == nil || p.question != nil {
		return domain.ApprovalPrompt{}, false
	}
	return domain.ApprovalPrompt{Present: true, Answerable: true, Kind: "shell_command", Tool: "exec_command",
		CommandExcerpt: p.command, Command: shellScript(p.command), Decisions: []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject},
		Fingerprint: p.fingerprint(turnID),
		// Accepted or declined, the turn goes on (a declined command is the
		// model's to handle).
		Where: "where the thread is shown", Unproven: "the answer to the daemon's approval request went out but its effect is not proven"}, true
}

// shellWrapper is how Codex's exec_command runs a command: a login shell
// given the script as one single-quoted argument.
var shellWrapper = regexp.MustCompile(`^(?:/bin/|/usr/bin/)?(?:bash|zsh|sh) -l?c '([^']*)'$`)

// shellScript is the script a daemon's command runs, when the command is
// exactly a shell wrapper around one single-quoted script (as the TUI
// shows it); "" otherwise. Only an exact-command rule compares it, and
// the rule admits no shell syntax.
func shellScript(command string) string {
	if m := shellWrapper.FindStringSubmatch(command); m != nil {
		return m[1]
	}
	return ""
}

// Decide implements domain.ThreadTransport: answers the approval the turn
// waits on, if it is still the one fingerprinted, with a one-time accept
// or a decline, and waits for the daemon to say it is resolved.
func (b *Backend) Decide(ctx context.Context, turnID, fingerprint string, d domain.ApprovalDecision) (domain.AnswerStage, error) {
	p := b.prompt(turnID)
	if p == nil || p.question != nil || p.fingerprint(turnID) != fingerprint {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	decision := Decline
	if d == domain.ApproveOnce {
		decision = ApproveOnce
	} else if d != domain.Reject {
		return domain.AnswerNothing, domain.ErrDecisionUnavailable
	}
	if err := p.f.c.DecideCommand(ctx, p.req, decision); err != nil {
		return domain.AnswerSent, err // it may have gone out
	}
	return p.settled(ctx)
}

// settled waits for the daemon to say the answered request is resolved.
func (p *prompt) settled(ctx context.Context) (domain.AnswerStage, error) {
	select {
	case <-p.resolved:
		return domain.AnswerVerified, nil
	case <-p.f.c.Done():
		return domain.AnswerSent, ErrClosed
	case <-ctx.Done():
		return domain.AnswerSent, ctx.Err()
	}
}

// otherKey is the private key of a question's own-words choice.
const otherKey = "\x00other"

// Question implements domain.ThreadTransport: the question the turn's
// follower waits on now, as one step of single-select questions (an
// own-words choice where the question allows one; a question without
// options is free text). A secret question is shown, never answerable.
func (b *Backend) Question(turnID string) (domain.InteractionStep, bool) {
	p := b.prompt(turnID)
	if p == nil || p.question == nil {
		return domain.InteractionStep{}, false
	}
	st := domain.InteractionStep{Present: true, Answerable: true, Kind: "questionnaire", Index: 1, Total: 1,
		BatchResponse: true, FreeTextLimit: MaxAnswerText, Fingerprint: p.fingerprint(turnID)}
	for _, q := range p.question.Questions {
		sq := domain.StepQuestion{Key: q.ID, Header: q.Header, Prompt: q.Question, Required: true, ResponseKind: domain.SingleSelect}
		for _, o := range q.Options {
			sq.Options = append(sq.Options, domain.StepOption{Key: o.Label, Label: o.Label})
		}
		switch {
		case len(q.Options) == 0:
			sq.ResponseKind = domain.FreeText
		case q.IsOther:
			sq.Options = append(sq.Options, domain.StepOption{Key: otherKey, Label: "Other", TakesText: true})
		}
		if q.IsSecret {
			st.Answerable, st.Reason = false, "a question asks for a secret; AKK never relays one: answer it where the thread is shown"
		}
		st.Questions = append(st.Questions, sq)
	}
	return st, true
}

// AnswerQuestion implements domain.ThreadTransport: answers the question the
// turn waits on, if it is still the one fingerprinted, and waits for the
// daemon to say it is resolved.
func (b *Backend) AnswerQuestion(ctx context.Context, turnID, fingerprint string, answers []domain.StepAnswer) (domain.AnswerStage, error) {
	p := b.prompt(turnID)
	if p == nil || p.question == nil || p.fingerprint(turnID) != fingerprint {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	byQuestion := map[string]Answer{}
	for _, a := range answers {
		var ans Answer
		switch {
		case len(a.OptionKeys) == 1 && a.OptionKeys[0] == otherKey && a.Text != "":
			ans.Text = a.Text
		case len(a.OptionKeys) == 1 && a.OptionKeys[0] != otherKey && a.Text == "":
			ans.Option = a.OptionKeys[0]
		case len(a.OptionKeys) == 0 && a.Text != "":
			ans.Text = a.Text
		default:
			return domain.AnswerNothing, domain.ErrDecisionUnavailable // the own-words choice needs its text, in one answer
		}
		byQuestion[a.QuestionKey] = ans
	}
	if _, err := UserInputResult(p.req, byQuestion); err != nil {
		return domain.AnswerNothing, fmt.Errorf("%w: %v", domain.ErrDecisionUnavailable, err)
	}
	if err := p.f.c.AnswerUserInput(ctx, p.req, byQuestion); err != nil {
		return domain.AnswerSent, err
	}
	return p.settled(ctx)
}
