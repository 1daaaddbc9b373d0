package domain

import (
	"fmt"
	"strings"
	"sync"
)

// EndpointKind is the transport an endpoint is reached through.
type EndpointKind string

// Endpoint kinds.
const (
	// EndpointPane: an agent's terminal pane, driven by keys.
	EndpointPane EndpointKind = "pane"
	// EndpointCodexThread: a Codex thread, driven through its app-server
	// daemon.
	EndpointCodexThread EndpointKind = "codex_thread"
)

// ThreadKind is what the domain knows of a thread transport besides its
// calls.
type ThreadKind struct {
	Endpoint EndpointKind // the kind of its endpoints
	// IDPrefix begins its endpoint ids ("cx_" and the thread id); "conv_"
	// and that is a thread's conversation id.
	IDPrefix string
	Agent    AgentKind    // the agent its threads run
	Path     DeliveryPath // how a Send reaches a thread
	Name     string       // what a person calls its daemon, in messages
}

// CodexThreads is Codex's app-server daemon as a thread transport.
var CodexThreads = ThreadKind{Endpoint: EndpointCodexThread, IDPrefix: "cx_", Agent: AgentCodex,
	Path: PathCodexBackend, Name: "Codex app-server daemon"}

// The public ids of a thread transport's thread: its endpoint (what a
// Turn of the thread holds where a pane's Turn holds its terminal, so one
// Turn at a time holds a thread) is the kind's id prefix and the thread
// id; its conversation is "conv_" and that. This file alone writes and
// reads them; a pane's ids have no such prefix ("term_…", "conv_…").
const conversationPrefix = "conv_"

// idPrefixes are the id prefixes of the thread kinds this process knows:
// Codex's always, another once it is registered (UseThreadTransport).
var idPrefixes = struct {
	sync.RWMutex
	byKind map[EndpointKind]string
}{byKind: map[EndpointKind]string{CodexThreads.Endpoint: CodexThreads.IDPrefix}}

// registerIDPrefix makes k's ids known to ParseEndpoint. A kind keeps the
// prefix it was first given.
func registerIDPrefix(k ThreadKind) error {
	if k.Endpoint == "" || k.Endpoint == EndpointPane {
		return fmt.Errorf("thread kind %q: an endpoint kind of its own is needed", k.Endpoint)
	}
	// Its ids must never be read as a pane's, a conversation's or another
	// kind's: every id would otherwise parse as one of its threads.
	if !validIDPrefix(k.IDPrefix) {
		return fmt.Errorf("thread kind %q: id prefix %q must be a word and an underscore (\"cx_\")", k.Endpoint, k.IDPrefix)
	}
	idPrefixes.Lock()
	defer idPrefixes.Unlock()
	if p, ok := idPrefixes.byKind[k.Endpoint]; ok {
		if p != k.IDPrefix {
			return fmt.Errorf("thread kind %q is registered with id prefix %q", k.Endpoint, p)
		}
		return nil
	}
	taken := []string{"term_", conversationPrefix, "turn_", "watch_", "sess_", "host_", "offer_", "msg_"}
	for _, p := range idPrefixes.byKind {
		taken = append(taken, p)
	}
	for _, p := range taken {
		if strings.HasPrefix(p, k.IDPrefix) || strings.HasPrefix(k.IDPrefix, p) {
			return fmt.Errorf("thread kind %q: id prefix %q clashes with %q", k.Endpoint, k.IDPrefix, p)
		}
	}
	idPrefixes.byKind[k.Endpoint] = k.IDPrefix
	return nil
}

// validIDPrefix: a lower-case word and one underscore, "cx_".
func validIDPrefix(p string) bool {
	word, ok := strings.CutSuffix(p, "_")
	if !ok || word == "" || word[0] < 'a' || word[0] > 'z' {
		return false
	}
	for _, r := range word {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// prefixOf is kind's id prefix, "" for a pane (or an unknown kind).
func prefixOf(kind EndpointKind) string {
	idPrefixes.RLock()
	defer idPrefixes.RUnlock()
	return idPrefixes.byKind[kind]
}

// kindOfID is the thread kind whose prefix begins id, with the rest.
func kindOfID(id string) (EndpointRef, bool) {
	idPrefixes.RLock()
	defer idPrefixes.RUnlock()
	for kind, prefix := range idPrefixes.byKind {
		if rest, ok := strings.CutPrefix(id, prefix); ok {
			return EndpointRef{Kind: kind, ID: rest}, true
		}
	}
	return EndpointRef{}, false
}

// BackendConversationID is the conversation id of a Codex thread.
func BackendConversationID(threadID string) string {
	return EndpointRef{Kind: EndpointCodexThread, ID: threadID}.ConversationID()
}

// BackendEndpoint is the endpoint a Turn of a Codex thread holds.
func BackendEndpoint(threadID string) string {
	return EndpointRef{Kind: EndpointCodexThread, ID: threadID}.String()
}

// conversationThread is the thread endpoint a thread's conversation id
// names.
func conversationThread(id string) (EndpointRef, bool) {
	rest, ok := strings.CutPrefix(id, conversationPrefix)
	if !ok {
		return EndpointRef{}, false
	}
	ref, ok := kindOfID(rest)
	return ref, ok && ref.ID != ""
}

// EndpointRef names what a Turn or a Watch holds: a pane by its terminal
// id, or a thread by its thread id.
type EndpointRef struct {
	Kind EndpointKind
	ID   string
}

// ParseEndpoint reads a stored endpoint id (a Turn's or a Watch's
// TerminalID). It is the one place that tells a thread's endpoint from a
// pane.
func ParseEndpoint(id string) EndpointRef {
	if ref, ok := kindOfID(id); ok {
		return ref
	}
	return EndpointRef{Kind: EndpointPane, ID: id}
}

// String is the endpoint's stored id, as ParseEndpoint reads it.
func (r EndpointRef) String() string { return prefixOf(r.Kind) + r.ID }

// ConversationID is the public conversation id of the endpoint: a pane's
// (ConversationIDFor its terminal) or a thread's.
func (r EndpointRef) ConversationID() string {
	if prefix := prefixOf(r.Kind); prefix != "" {
		return conversationPrefix + prefix + r.ID
	}
	return ConversationIDFor(r.ID)
}
