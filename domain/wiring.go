package domain

// The Service's setters: each wires a port into every use case that
// holds it.

// UseTerminals wires terminal discovery in.
func (s *Service) UseTerminals(t Terminals) {
	s.TurnCases.terminals, s.DoctorCases.terminals, s.ListCases.terminals, s.ThreadCases.terminals = t, t, t, t
}

// UseScreens wires the screen reader in.
func (s *Service) UseScreens(r ScreenReader) { s.TurnCases.screens = r }

// UseTurns wires the terminal side of Turns in.
func (s *Service) UseTurns(term TurnTerminal, redact Redactor, cfg TurnConfig) {
	cfg.defaults()
	tr := &turns{term: term, redact: redact, cfg: cfg, locks: map[string]*terminalLock{}, monitors: map[string]*monitorHandle{}, readErr: map[string]bool{}}
	s.TurnCases.turns, s.NativeCases.turns, s.InteractionCases.turns, s.ApprovalCases.turns = tr, tr, tr, tr
	s.turnLedger.turns, s.ListCases.turns, s.WatchCases.turns, s.Monitors.turns = tr, tr, tr, tr
	s.sendCore.turns, s.ThreadCases.turns, s.pane.turns = tr, tr, tr
}

// UseWatches wires the Watch anchor in (Observe and Progress come from the
// Turn terminal).
func (s *Service) UseWatches(w WatchTerminal) {
	s.watchTerm, s.WatchCases.watchTerm, s.ListCases.watchTerm = w, w, w
}
