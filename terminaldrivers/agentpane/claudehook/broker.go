// Package claudehook is Claude Code's exact permission channel: AKK as the
// endpoint of Claude Code's own http hooks. A PermissionRequest event
// carries the tool, its exact input and the session's ids; the decision
// goes back as the hook's answer, so no key is typed and the prompt is the
// same on every Claude Code version that sends the hook, profiled or not.
//
// The Broker holds each open PermissionRequest until a decision is made
// through AKK, the person answers in the pane (Claude Code then ends the
// request, or reports the tool's use), the turn moves on, or the hold
// ends; it then answers, or answers nothing and the pane's own dialog
// stays for the person. It knows no pane: Bind (given by the pane adapter)
// says which listed pane a session belongs to, by exact identity.
package claudehook

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/quartz"
)

// Path is where akkd serves the hook (outside the REST contract: only
// Claude Code calls it, with the hook credential).
const Path = "/hooks/claude-code"

// HookTimeout is the time limit AKK writes into the hooks it installs
// (seconds). Claude Code draws its own dialog while the hook waits, so a
// long limit costs the person nothing: they may answer in the pane at any
// time.
const HookTimeout = 600

// DefaultHold is how long AKK holds a request before it answers nothing:
// a little under HookTimeout, so AKK, not Claude Code's timer, ends it.
const DefaultHold = (HookTimeout - 10) * time.Second

// FingerprintPrefix marks the fingerprint of a prompt this channel
// carries.
const FingerprintPrefix = "hook:"

// maxBody bounds a hook event.
const maxBody = 1 << 20

// Decision is what AKK answers a request with.
type Decision string

// Decisions.
const (
	Allow Decision = "allow"
	Deny  Decision = "deny"
)

// Errors of Decide.
var (
	// ErrGone: no open request has that fingerprint (answered in the pane,
	// ended by Claude Code, or never seen); nothing was sent.
	ErrGone = errors.New("the hook request is no longer open")
	// ErrUnsent: the answer could not be written; Claude Code may or may
	// not have read it.
	ErrUnsent = errors.New("the hook's answer could not be written")
)

// Binding names the listed pane a hook event's session belongs to.
type Binding struct {
	TerminalID string
}

// Config is what a Broker needs.
type Config struct {
	// TokenFile holds the hook credential (one line). It is read again
	// when it changes, so replacing it revokes the old one at once.
	TokenFile string
	// Bind finds the listed pane of a session by exact identity (its
	// session id and transcript against the pane's agent record).
	Bind func(ctx context.Context, sessionID, transcriptPath string) (Binding, bool)
	// Changed is called when a request of a pane opens or ends.
	Changed func(terminalID string)
	Clock   quartz.Clock
	// Hold: DefaultHold when zero.
	Hold time.Duration
	Log  *slog.Logger
}

// Broker is the hook endpoint and the requests it holds.
type Broker struct {
	cfg  Config
	boot string // a per-start nonce in every fingerprint

	mu      sync.Mutex
	seq     int64
	pending map[string]*request // by fingerprint
	live    map[string]bool     // sessions that sent AKK a hook event

	tokMu   sync.Mutex
	tokHash [32]byte
	tokStat os.FileInfo
}

// request is one open PermissionRequest.
type request struct {
	fp         string
	terminalID string
	sessionID  string
	tool       string
	command    string
	input      string // digest of tool_input
	openedAt   time.Time
	// dialogSeen: the pane showed Claude Code's own dialog while this
	// request was open; goneSince: the first look since then that did not
	// show it (zero: the last look did).
	dialogSeen bool
	goneSince  time.Time
	answer     chan answer
	ended      chan struct{} // closed when it ends otherwise
	once       sync.Once
}

type answer struct {
	d      Decision
	result chan error
}

// Prompt is an open request as the pane adapter offers it.
type Prompt struct {
	Fingerprint string
	Tool        string
	Command     string
	OpenedAt    time.Time
}

// New builds a Broker.
func New(cfg Config) *Broker {
	if cfg.Clock == nil {
		cfg.Clock = quartz.NewReal()
	}
	if cfg.Hold <= 0 {
		cfg.Hold = DefaultHold
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	return &Broker{cfg: cfg, boot: hex.EncodeToString(nonce[:]), pending: map[string]*request{}, live: map[string]bool{}}
}

// Live reports whether the session sent AKK a hook event since akkd
// started: its hooks reach this daemon.
func (b *Broker) Live(sessionID string) bool {
	if sessionID == "" {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.live[sessionID]
}

// Open returns the open request of terminalID's session, if any (the
// oldest when several are open).
func (b *Broker) Open(terminalID, sessionID string) (Prompt, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var best *request
	for _, r := range b.pending {
		if r.terminalID == terminalID && r.sessionID == sessionID && (best == nil || r.openedAt.Before(best.openedAt) || (r.openedAt.Equal(best.openedAt) && r.fp < best.fp)) {
			best = r
		}
	}
	if best == nil {
		return Prompt{}, false
	}
	return Prompt{Fingerprint: best.fp, Tool: best.tool, Command: best.command, OpenedAt: best.openedAt}, true
}

// DialogGone is how long Claude Code's dialog, once seen, must be gone
// from every look before its request is taken as answered in the pane: a
// single look without it proves little (Claude Code redraws its dialog,
// and a look taken then would end a request nobody answered).
const DialogGone = 250 * time.Millisecond

// Dialog records what the pane's screen shows while request fp is open:
// shown, Claude Code's own dialog. A dialog seen and then gone from every
// look for DialogGone means the person answered it in the pane (Claude
// Code keeps the request open when the person approves there): the
// request ends, unanswered, and Dialog reports false. Before the dialog is
// drawn the request stays open (a hook answered then is answered with no
// dialog at all).
func (b *Broker) Dialog(fp string, shown bool) (open bool) {
	b.mu.Lock()
	q, ok := b.pending[fp]
	if !ok {
		b.mu.Unlock()
		return false
	}
	if shown {
		q.dialogSeen, q.goneSince = true, time.Time{}
		b.mu.Unlock()
		return true
	}
	if !q.dialogSeen {
		b.mu.Unlock()
		return true
	}
	now := b.cfg.Clock.Now()
	if q.goneSince.IsZero() {
		q.goneSince = now
	}
	if now.Sub(q.goneSince) < DialogGone {
		b.mu.Unlock()
		return true
	}
	delete(b.pending, fp)
	b.mu.Unlock()
	q.once.Do(func() { close(q.ended) })
	b.changed(q.terminalID)
	return false
}

// Decide answers the open request fp with d, once. nil: Claude Code was
// sent the answer whole. ErrGone: nothing was sent. ErrUnsent: the write
// failed, what Claude Code read is unknown.
func (b *Broker) Decide(ctx context.Context, fp string, d Decision) error {
	b.mu.Lock()
	r, ok := b.pending[fp]
	if ok {
		delete(b.pending, fp) // nobody else may answer it
	}
	b.mu.Unlock()
	if !ok {
		return ErrGone
	}
	res := make(chan error, 1)
	select {
	case r.answer <- answer{d: d, result: res}:
	case <-r.ended:
		return ErrGone
	}
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return ErrUnsent
	}
}

// event is the part of a hook event AKK reads.
type event struct {
	Name           string          `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
}

// ServeHTTP is the hook endpoint. Anything AKK will not answer gets an
// empty answer at once (Claude Code then shows its dialog as before).
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if !b.authorized(r.Header.Get("Authorization")) {
		// Never logged: the header holds the credential.
		http.Error(w, "not a valid AKK hook credential; run `akk hooks install claude-code` again", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "the event could not be read", http.StatusBadRequest)
		return
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil || ev.Name == "" || ev.SessionID == "" {
		http.Error(w, "not a Claude Code hook event", http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	b.live[ev.SessionID] = true
	b.mu.Unlock()
	switch ev.Name {
	case "PermissionRequest":
		b.permission(w, r, ev)
		return
	case "PostToolUse", "PostToolUseFailure":
		// The tool ran (or failed): its permission was settled, by the
		// person if not by AKK.
		b.end(ev.SessionID, func(q *request) bool { return q.tool == ev.ToolName && q.input == digest(ev.ToolInput) })
	case "Stop", "StopFailure", "UserPromptSubmit", "SessionEnd":
		// The turn moved on: nothing it asked before is open.
		b.end(ev.SessionID, func(*request) bool { return true })
	}
	writeEmpty(w)
}

// permission holds one PermissionRequest until it is decided or ends.
func (b *Broker) permission(w http.ResponseWriter, r *http.Request, ev event) {
	command := shellCommand(ev)
	if command == "" {
		// Only a shell command's prompt is offered (its exact command is
		// what a host approves); other tools stay the person's.
		writeEmpty(w)
		return
	}
	bind, ok := b.cfg.Bind(r.Context(), ev.SessionID, ev.TranscriptPath)
	if !ok {
		// A Claude Code AKK does not list (another terminal): not offered.
		writeEmpty(w)
		return
	}
	q := b.open(bind.TerminalID, ev, command)
	defer b.closeRequest(q)
	timer := b.cfg.Clock.NewTimer(b.cfg.Hold, "claudehook", "hold")
	defer timer.Stop()
	select {
	case a := <-q.answer:
		err := writeDecision(w, a.d)
		// Closed before the answer is reported: once AKK records it and
		// wakes the Turn's monitor, no look may find the request still
		// open and announce the answered prompt again.
		b.closeRequest(q)
		a.result <- err
	case <-q.ended:
		writeEmpty(w)
	case <-r.Context().Done():
		// Claude Code ended it (the person answered or interrupted).
	case <-timer.C:
		writeEmpty(w)
	}
}

func (b *Broker) open(terminalID string, ev event, command string) *request {
	b.mu.Lock()
	b.seq++
	seq := b.seq
	now := b.cfg.Clock.Now()
	in := digest(ev.ToolInput)
	h := sha256.New()
	for _, part := range []string{b.boot, strconv.FormatInt(seq, 10), terminalID, ev.SessionID, ev.ToolName, in} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	q := &request{fp: FingerprintPrefix + hex.EncodeToString(h.Sum(nil))[:32], terminalID: terminalID, sessionID: ev.SessionID,
		tool: ev.ToolName, command: command, input: in, openedAt: now, answer: make(chan answer), ended: make(chan struct{})}
	b.pending[q.fp] = q
	b.mu.Unlock()
	b.changed(terminalID)
	return q
}

// closeRequest forgets q once its HTTP exchange is over.
func (b *Broker) closeRequest(q *request) {
	b.mu.Lock()
	if b.pending[q.fp] == q {
		delete(b.pending, q.fp)
	}
	b.mu.Unlock()
	q.once.Do(func() { close(q.ended) })
	b.changed(q.terminalID)
}

// end ends the open requests of a session that match.
func (b *Broker) end(sessionID string, match func(*request) bool) {
	b.mu.Lock()
	var ended []*request
	for fp, q := range b.pending {
		if q.sessionID == sessionID && match(q) {
			delete(b.pending, fp)
			ended = append(ended, q)
		}
	}
	b.mu.Unlock()
	for _, q := range ended {
		q.once.Do(func() { close(q.ended) })
		b.changed(q.terminalID)
	}
}

func (b *Broker) changed(terminalID string) {
	if b.cfg.Changed != nil {
		b.cfg.Changed(terminalID)
	}
}

// authorized checks the bearer credential against the token file.
func (b *Broker) authorized(header string) bool {
	tok, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || tok == "" {
		return false
	}
	want, ok := b.tokenHash()
	if !ok {
		return false
	}
	got := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

func (b *Broker) tokenHash() ([32]byte, bool) {
	b.tokMu.Lock()
	defer b.tokMu.Unlock()
	st, err := os.Stat(b.cfg.TokenFile)
	if err != nil {
		b.tokStat = nil
		return [32]byte{}, false
	}
	if b.tokStat == nil || !os.SameFile(st, b.tokStat) || !st.ModTime().Equal(b.tokStat.ModTime()) || st.Size() != b.tokStat.Size() {
		raw, err := os.ReadFile(b.cfg.TokenFile)
		tok := strings.TrimSpace(string(raw))
		if err != nil || tok == "" {
			return [32]byte{}, false
		}
		b.tokHash, b.tokStat = sha256.Sum256([]byte(tok)), st
	}
	return b.tokHash, true
}

// shellCommand is the exact command of a Bash permission request ("" for
// any other tool).
func shellCommand(ev event) string {
	if ev.ToolName != "Bash" {
		return ""
	}
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(ev.ToolInput, &in) != nil {
		return ""
	}
	return in.Command
}

// digest is a stable digest of a tool input (key order normalised).
func digest(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			raw = b
		}
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}

func writeEmpty(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, "{}")
}

// writeDecision writes the hook's answer and flushes it.
func writeDecision(w http.ResponseWriter, d Decision) error {
	dec := map[string]any{"behavior": string(d)}
	if d == Deny {
		dec["message"] = "Rejected through AKK"
	}
	body, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PermissionRequest", "decision": dec}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if _, err := w.Write(body); err != nil {
		return errors.Join(ErrUnsent, err)
	}
	if err := http.NewResponseController(w).Flush(); err != nil {
		return errors.Join(ErrUnsent, err)
	}
	return nil
}
