// Package domain holds AKK's entities, state machines, use cases and the
// ports they need. It knows no technology: no SQL, no tmux, no HTTP.
package domain

import (
	"context"
	"sync"
	"time"
)

// Service runs the use cases. It is safe for concurrent use.
type Service struct {
	basics
	terminals    Terminals
	turns        *turns
	approvals    ApprovalTerminal
	watchTerm    WatchTerminal
	backend      BackendThreads
	codexBackend CodexBackend
	endpoints    map[EndpointKind]turnEndpoint // by kind (endpointOf)
	interactions InteractionTerminal
	threads      ThreadReader
	native       NativeControls
	screens      ScreenReader
	catalogMu    sync.Mutex
	catalogs     map[catalogKey]catalog

	saltOnce sync.Mutex
	salt     []byte
	Retry    RetryPolicy

	// input counts key sequences in flight (see keySequence).
	input sync.WaitGroup
	// answering counts, by Turn, the answers AKK is giving its prompt or
	// step (answerTurn): their monitors announce no prompt meanwhile.
	answeringMu sync.Mutex
	answering   map[string]int
	// promptsSeen is, per terminal, the prompt a listing last saw waiting
	// (no Turn holding the pane) and since when: this daemon's first
	// sight, the best there is for a prompt AKK did not cause.
	seenMu      sync.Mutex
	promptsSeen map[string]seenPrompt

	// The use cases that stand alone: they see only the ports they hold.
	*HostCases
	*PushCases
	*EventCases
	*DoctorCases

	// The use cases of one kind each, in types of their own; their
	// methods are the Service's (promoted), and they see all of it.
	*nativeCases
	*backendCases
	*watchCases
	*approvalCases
	*interactionCases
	*monitorCases
}

// basics are the ports every use case reads: the store, the clock, new
// ids and secrets, and the request validator. They are set once, at
// NewService.
type basics struct {
	store     Store
	clock     Clock
	ids       IDs
	validator Validator
}

// The use-case types: each sees the whole Service through its pointer.
type (
	nativeCases      struct{ *Service } // a pane's own controls: threads, models, permissions, status
	backendCases     struct{ *Service } // Codex threads through the app-server daemon
	watchCases       struct{ *Service } // Watches of tasks AKK did not send
	approvalCases    struct{ *Service } // permission prompts, by hand and by policy
	interactionCases struct{ *Service } // questionnaires and async questions
	monitorCases     struct{ *Service } // following Turns: their monitors' lives and rounds
)

// KeySequenceBound bounds a key sequence once it started: it runs to its
// end under this bound, whatever happens to the request that asked for it.
const KeySequenceBound = 30 * time.Second

// keySequence is the context a key sequence runs under once its
// reservation is durable: a client that disconnects, or a daemon shutting
// down, must not stop it between the paste and the Enter (that would leave
// text in the composer and the Turn uncertain). Call done when it ends.
func (s *Service) keySequence(ctx context.Context) (seq context.Context, done func()) {
	s.input.Add(1)
	seq, cancel := s.boundedFrom(ctx, KeySequenceBound, "key-sequence")
	return seq, func() { cancel(); s.input.Done() }
}

// answerTurn marks an answer to Turn id's prompt or step as under way,
// until done is called: from before its first key until its outcome is
// recorded. Meanwhile the Turn's monitor announces no prompt or step: what
// it reads then is the answer's own doing (a menu's selection moving, the
// next step drawn before the answer is recorded), and the recorded
// outcome moves the Turn on, after which a step still shown is announced.
func (s *Service) answerTurn(id string) (done func()) {
	s.answeringMu.Lock()
	if s.answering == nil {
		s.answering = map[string]int{}
	}
	s.answering[id]++
	s.answeringMu.Unlock()
	return func() {
		s.answeringMu.Lock()
		if s.answering[id]--; s.answering[id] <= 0 {
			delete(s.answering, id)
		}
		s.answeringMu.Unlock()
	}
}

// answeringNow reports whether an answer to Turn id is under way.
func (s *Service) answeringNow(id string) bool {
	s.answeringMu.Lock()
	defer s.answeringMu.Unlock()
	return s.answering[id] > 0
}

// WaitForInput waits until no key sequence is in flight, or ctx ends: a
// daemon shutting down calls it before it stops.
func (s *Service) WaitForInput(ctx context.Context) error {
	idle := make(chan struct{})
	go func() { s.input.Wait(); close(idle) }()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pause waits d on the clock, or until ctx ends.
func (s *Service) pause(ctx context.Context, d time.Duration) error {
	t := s.clock.NewTimer(d, "pause")
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// NewService wires the use cases to their ports.
func NewService(store Store, clock Clock, ids IDs, v Validator) *Service {
	b := basics{store: store, clock: clock, ids: ids, validator: v}
	s := &Service{basics: b, Retry: DefaultRetryPolicy(), HostCases: newHostCases(b)}
	s.PushCases = &PushCases{basics: b, fleet: s.HostCases.fleet, of: s}
	s.EventCases, s.DoctorCases = &EventCases{b}, &DoctorCases{basics: b}
	s.nativeCases, s.backendCases, s.watchCases = &nativeCases{s}, &backendCases{s}, &watchCases{s}
	s.approvalCases, s.interactionCases, s.monitorCases = &approvalCases{s}, &interactionCases{s}, &monitorCases{s}
	s.register(EndpointPane, paneEndpoint{s})
	return s
}

func (s basics) validate(v any) error {
	if s.validator == nil {
		return nil
	}
	if fields := s.validator.Struct(v); len(fields) > 0 {
		return Invalid("the request is invalid", fields...)
	}
	return nil
}
