// Package domain holds AKK's entities, state machines, use cases and the
// ports they need. It knows no technology: no SQL, no tmux, no HTTP.
package domain

import "context"

// Service is the composition root: it builds the use cases, wires their
// ports in (wiring.go) and offers their methods as one (promoted). It is
// safe for concurrent use.
type Service struct {
	basics
	endpoints *endpointRegistry

	Retry RetryPolicy

	// The key sequences in flight, the answers under way, and the Turns'
	// ledger.
	*inputGate
	*turnLedger
	*answerMarks

	// The use cases that stand alone: they see only the ports they hold.
	*TurnCases
	*HostCases
	*PushCases
	*EventCases
	*DoctorCases
	*NativeCases
	*InteractionCases
	*ApprovalCases
	*ListCases
	*WatchCases
	*Monitors
	*sendCore
	*ThreadCases
}

// serviceWriter is the Turns' writer of the use cases that move a Turn:
// the ledger's transitions and the monitors' start.
type serviceWriter struct {
	*turnLedger
	*Monitors
}

func (s *Service) turnWriter() turnWriter { return serviceWriter{s.turnLedger, s.Monitors} }

// NewService wires the use cases to their ports.
func NewService(store Store, clock Clock, ids IDs, v Validator) *Service {
	b := basics{store: store, clock: clock, ids: ids, validator: v}
	s := &Service{basics: b, Retry: DefaultRetryPolicy(), HostCases: newHostCases(b),
		inputGate: &inputGate{timer: b}, answerMarks: &answerMarks{}, turnLedger: &turnLedger{basics: b}}
	s.endpoints = &endpointRegistry{absent: func(k EndpointKind) Endpoint { return absentEndpoint{k} }}
	s.PushCases = &PushCases{basics: b, fleet: s.HostCases.fleet}
	s.EventCases, s.DoctorCases = &EventCases{b}, &DoctorCases{basics: b}
	s.NativeCases = &NativeCases{basics: b, inputGate: s.inputGate, endpoints: s.endpoints}
	s.Monitors = &Monitors{basics: b, answers: s.answerMarks, ledger: s.turnLedger, endpoints: s.endpoints}
	s.InteractionCases = &InteractionCases{basics: b, inputGate: s.inputGate, answerMarks: s.answerMarks, endpoints: s.endpoints, writer: s.turnWriter()}
	s.ApprovalCases = &ApprovalCases{basics: b, inputGate: s.inputGate, answerMarks: s.answerMarks, endpoints: s.endpoints, writer: s.turnWriter()}
	s.ListCases = &ListCases{basics: b, ledger: s.turnLedger, nat: s.NativeCases, ic: s.InteractionCases, ac: s.ApprovalCases}
	s.WatchCases = &WatchCases{basics: b, inputGate: s.inputGate, ledger: s.turnLedger, endpoints: s.endpoints,
		nat: s.NativeCases, hosts: s.HostCases, viaTurns: s}
	s.Monitors.watches, s.Monitors.ac, s.Monitors.ic = s.WatchCases, s.ApprovalCases, s.InteractionCases
	s.sendCore = &sendCore{basics: b, input: s.inputGate, endpoints: s.endpoints, ledger: s.turnLedger, monitors: s.Monitors, watches: s.WatchCases}
	s.ThreadCases = &ThreadCases{basics: b, endpoints: s.endpoints, ledger: s.turnLedger, sends: s.sendCore, monitors: s.Monitors,
		watches: s.WatchCases, list: s.ListCases, ic: s.InteractionCases, ac: s.ApprovalCases}
	s.ListCases.threadRows = s.ThreadCases
	s.TurnCases = &TurnCases{basics: b, inputGate: s.inputGate, turnLedger: s.turnLedger, sendCore: s.sendCore,
		endpoints: s.endpoints, mons: s.Monitors, hosts: s.HostCases, nat: s.NativeCases, threads: s.ThreadCases,
		ic: s.InteractionCases, ac: s.ApprovalCases}
	s.PushCases.of = pushOf{s.TurnCases, s.ApprovalCases}
	return s
}

// pushOf is what a push reads of a Turn (the Turns' use case) and how its
// one-tap action answers (the approvals').
type pushOf struct {
	*TurnCases
	approvals *ApprovalCases
}

func (p pushOf) Approve(ctx context.Context, turnID string, d ApprovalDecision) (ActionResult, error) {
	return p.approvals.Approve(ctx, turnID, d)
}
