package domain

// The Service's setters: each wires a port into every use case that
// holds it.

// UseTerminals wires terminal discovery in.
func (s *Service) UseTerminals(t Terminals) {
	s.TurnCases.terminals, s.DoctorCases.terminals, s.ListCases.terminals, s.ThreadCases.terminals = t, t, t, t
}

// UsePanes wires the pane transport in: the panes' Turns, Watches,
// prompts, steps and native controls, their screens' redactor and the
// Turns' timing.
func (s *Service) UsePanes(p PaneTransport, redact Redactor, cfg TurnConfig) {
	cfg.defaults()
	tr := &turns{term: p, redact: redact, cfg: cfg, locks: map[string]*terminalLock{}, monitors: map[string]*monitorHandle{}, readErr: map[string]bool{}}
	s.TurnCases.turns, s.NativeCases.turns, s.InteractionCases.turns, s.ApprovalCases.turns = tr, tr, tr, tr
	s.turnLedger.turns, s.ListCases.turns, s.WatchCases.turns, s.Monitors.turns = tr, tr, tr, tr
	s.sendCore.turns, s.ThreadCases.turns = tr, tr
	s.ApprovalCases.approvals, s.NativeCases.native = p, p
	s.WatchCases.watchTerm, s.ListCases.watchTerm = p, p
	s.TurnCases.screens, _ = p.(ScreenReader)
}

// UseEndpoint makes e the endpoint of every Turn and Watch of kind: how
// they are read, answered, interrupted and followed.
func (s *Service) UseEndpoint(kind EndpointKind, e Endpoint) {
	s.endpoints.register(kind, e)
}

// Clock is the clock the service runs on, for an endpoint wired in to
// follow on the same one.
func (s *Service) Clock() Clock { return s.clock }
