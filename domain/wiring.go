package domain

// The Service's setters: each wires a port into every use case that
// holds it.

// UseTerminals wires terminal discovery in.
func (s *Service) UseTerminals(t Terminals) {
	s.terminals, s.DoctorCases.terminals, s.ListCases.terminals, s.ThreadCases.terminals = t, t, t, t
}

// endpointOf is the endpoint registered for ref's kind (endpointRegistry.of).
func (s *Service) endpointOf(ref EndpointRef) turnEndpoint { return s.endpoints.of(ref) }

// UseScreens wires the screen reader in.
func (s *Service) UseScreens(r ScreenReader) { s.screens = r }

// UseTurns wires the terminal side of Turns in.
func (s *Service) UseTurns(term TurnTerminal, redact Redactor, cfg TurnConfig) {
	cfg.defaults()
	s.turns = &turns{term: term, redact: redact, cfg: cfg, locks: map[string]*terminalLock{}, monitors: map[string]*monitorHandle{}, readErr: map[string]bool{}}
	s.NativeCases.turns, s.InteractionCases.turns, s.ApprovalCases.turns = s.turns, s.turns, s.turns
	s.turnLedger.turns, s.ListCases.turns, s.WatchCases.turns, s.Monitors.turns = s.turns, s.turns, s.turns, s.turns
	s.sendCore.turns, s.ThreadCases.turns, s.pane.turns = s.turns, s.turns, s.turns
}

// UseWatches wires the Watch anchor in (Observe and Progress come from the
// Turn terminal).
func (s *Service) UseWatches(w WatchTerminal) {
	s.watchTerm, s.WatchCases.watchTerm, s.ListCases.watchTerm = w, w, w
}
