package domain

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// Gauges reads the daemon's state for /metrics: the store's counts, the
// panes listed now, the monitors running.
func (s *TurnCases) Gauges(ctx context.Context) (Gauges, error) {
	c, err := s.store.Counts(ctx)
	if err != nil {
		return Gauges{}, err
	}
	g := Gauges{StoreCounts: c, Panes: map[[2]string]int{}, Now: s.clock.Now().UTC()}
	if s.terminals != nil {
		if ts, err := s.terminals.Discover(ctx); err == nil {
			for _, t := range ts {
				g.Panes[[2]string{string(t.Agent.Kind), string(t.ScreenState)}]++
			}
		}
	}
	if tr := s.turns; tr != nil {
		tr.monMu.Lock()
		for _, h := range tr.monitors {
			if h.ctx.Err() == nil {
				g.Monitors++
			}
		}
		tr.monMu.Unlock()
	}
	return g, nil
}

// progressOf builds the public progress of t, read at now. The commentary
// was redacted when stored; here code blocks are left out (they may hold
// diffs or command output) and the body is cut to the budget at a
// grapheme boundary.
func (s *TurnCases) progressOf(t Turn, now time.Time, readErr bool) ProgressView {
	v := ProgressView{NativeTurnID: t.NativeTurnID, ReadAt: now, LatestItemAt: t.LatestItemAt, State: ProgressNone}
	budget := ProgressBudget
	for _, a := range t.Actions {
		if len(v.Actions) == 2 {
			break
		}
		typ, cut := s.cutGraphemes(a.Type, maxActionType)
		v.Truncated = v.Truncated || cut
		pa := ProgressAction{Type: typ, Status: a.Status}
		budget -= utf8.RuneCountInString(pa.Type) + utf8.RuneCountInString(pa.Status)
		v.Actions = append(v.Actions, pa)
	}
	text := t.LatestText
	if codeFence.MatchString(text) {
		text = strings.TrimSpace(codeFence.ReplaceAllString(text, "[code omitted]"))
		v.Truncated = true
	}
	var cut bool
	v.Commentary, cut = s.cutGraphemes(text, max(budget, 0))
	v.Truncated = v.Truncated || cut || utf8.RuneCountInString(t.LatestText) >= StoredCommentaryLimit
	if v.Commentary != "" || len(v.Actions) > 0 {
		v.State = ProgressOK
	}
	if readErr {
		v.State = ProgressReadError
	}
	return v
}

// Progress is t's public progress as its stored record shows it now.
func (s *TurnCases) Progress(t Turn) ProgressView {
	failed := s.turns != nil && t.State.Monitored() && s.turns.readFailed(t.ID)
	return s.progressOf(t, s.clock.Now().UTC(), failed)
}

// Screen reads a terminal's screen once, redacted. A host may not read a
// pane a Turn of another host holds: its screen is that Turn's.
func (s *TurnCases) Screen(ctx context.Context, terminalID string) (TerminalScreen, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return TerminalScreen{}, err
	}
	if s.screens == nil || s.turns == nil {
		return TerminalScreen{}, E(CodeUnavailable, "screens are not configured")
	}
	if held, err := s.holdingTurn(ctx, terminalID); err == nil {
		if !p.CanSeeHost(held.HostID) {
			return TerminalScreen{}, E(CodeConflictActiveTurn, "a Turn of another controller holds this terminal; its screen is that controller's")
		}
	} else if !errors.Is(err, ErrNotFound) {
		return TerminalScreen{}, err
	}
	ps, err := s.screens.Screen(ctx, terminalID)
	if errors.Is(err, ErrTerminalGone) {
		return TerminalScreen{}, E(CodeTerminalNotFound, "no live pane runs terminal "+terminalID)
	}
	if err != nil {
		return TerminalScreen{}, err
	}
	rows := ps.Rows
	if rr, ok := s.turns.redact.(RowRedactor); ok {
		rows = rr.RedactRows(rows)
	} else {
		rows = append([]string(nil), rows...)
		for i, r := range rows {
			rows[i] = s.turns.redact.Redact(r)
		}
	}
	styles := make([][]ScreenSpan, len(rows))
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
		if i < len(ps.Styles) && rows[i] == strings.TrimRight(ps.Rows[i], " ") {
			styles[i] = clipSpans(ps.Styles[i], utf8.RuneCountInString(rows[i]))
		}
	}
	return TerminalScreen{TerminalID: terminalID, Text: strings.Join(rows, "\n"), Columns: ps.Columns, Lines: ps.Lines,
		ReadAt: s.clock.Now().UTC(), Styles: styles}, nil
}

// agentOf names the agent of a terminal ("Claude Code", "Codex") and its
// project, from the last listing; "" when unknown.
func (s *TurnCases) agentOf(ctx context.Context, terminalID string) (string, string) {
	if s.terminals == nil || terminalID == "" {
		return "", ""
	}
	terms, err := s.terminals.Discover(ctx)
	if err != nil {
		return "", ""
	}
	for _, t := range terms {
		if t.ID == terminalID {
			name := string(t.Agent.Kind)
			switch t.Agent.Kind {
			case AgentClaude:
				name = "Claude Code"
			case AgentCodex:
				name = "Codex"
			}
			return name, t.Project
		}
	}
	return "", ""
}

// follows reports whether this daemon's monitor follows Turn id.
func (s *TurnCases) follows(id string) bool { return s.turns != nil && s.turns.monitoring(id) }

// redactedExcerpt is text redacted as the Turns' text is, then bounded.
func (s *TurnCases) redactedExcerpt(text string, n int) string {
	var r Redactor
	if s.turns != nil {
		r = s.turns.redact
	}
	return boundText(r, text, n)
}

// TurnChanges lists the files a Turn's agent changed, from its record.
func (s *TurnCases) TurnChanges(ctx context.Context, turnID string) (TurnChanges, error) {
	if _, _, err := s.ownedTurn(ctx, turnID); err != nil {
		return TurnChanges{}, err
	}
	cs, err := s.store.TurnChanges(ctx, turnID)
	if err != nil {
		return TurnChanges{}, err
	}
	return TurnChanges{TurnID: turnID, Changes: cs, LimitReached: len(cs) >= MaxTurnChanges}, nil
}

// TerminalChanged tells the monitors following terminalID (its holding
// Turn, its active Watches) that an exact channel opened or ended a prompt
// there: they look again at once. No input.
func (s *TurnCases) TerminalChanged(ctx context.Context, terminalID string) {
	if s.turns == nil {
		return
	}
	if t, err := s.holdingTurn(ctx, terminalID); err == nil {
		s.nudge(t.ID)
	}
	if ws, err := s.store.OwnedActiveWatches(ctx); err == nil {
		for _, w := range ws {
			if w.TerminalID == terminalID {
				s.nudge(w.ID)
			}
		}
	}
}
