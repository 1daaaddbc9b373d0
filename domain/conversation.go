package domain

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Conversation is one agent terminal as a controller sees it: what AKK can
// prove about it now and the actions it may take.
type Conversation struct {
	ID       string
	Terminal Terminal
	Actions  []Action
	// SessionID is the caller's AKK session on this terminal, if any.
	SessionID string
	// CurrentTurn holds the terminal now; RecentTurn is the caller's latest
	// ended Turn there. Only Turns the caller may see are shown.
	CurrentTurn, RecentTurn *Turn
	// HeldByOther: a Turn the caller may not see holds the terminal.
	HeldByOther bool
	// Approval is the permission prompt the pane shows, offered to the caller.
	Approval *ApprovalView
}

// Action is one call a controller may make now, with its semantic ids
// prefilled. It is the only authority for what may be called.
type Action struct {
	Name   string
	Method string
	Path   string
	Body   map[string]any
}

// ConversationIDFor is the conversation id of a terminal: as stable as the
// terminal id itself.
func ConversationIDFor(terminalID string) string {
	return "conv_" + strings.TrimPrefix(terminalID, "term_")
}

// Terminals are the ports conversations and the doctor read.
type Terminals interface {
	TerminalDiscovery
	TerminalDiagnostics
}

// UseTerminals wires terminal discovery in.
func (s *Service) UseTerminals(t Terminals) { s.terminals = t }

func (s *Service) conversationOf(ctx context.Context, p Principal, t Terminal) (Conversation, error) {
	c := Conversation{ID: ConversationIDFor(t.ID), Terminal: t, Actions: []Action{}}
	held := false
	if s.turns != nil {
		recent, err := s.store.Turns(ctx, TurnFilter{All: true, Terminal: t.ID, Limit: 20})
		if err != nil {
			return c, err
		}
		for i := range recent {
			x := recent[i]
			if x.State.HoldsTerminal() {
				held = true
				if p.CanSeeHost(x.HostID) {
					c.CurrentTurn = &x
				} else {
					c.HeldByOther = true
				}
				continue
			}
			if c.RecentTurn == nil && p.CanSeeHost(x.HostID) {
				c.RecentTurn = &x
			}
		}
		for _, x := range recent {
			if p.CanSeeHost(x.HostID) {
				c.SessionID = x.SessionID
				break
			}
		}
		if t.SendReady() && !held {
			c.Actions = append(c.Actions, Action{Name: "send", Method: "POST", Path: "/v1/turns",
				Body: map[string]any{"terminal_id": t.ID}})
		}
		if s.watchTerm != nil && t.Watchable() && !held {
			c.Actions = append(c.Actions, Action{Name: "watch", Method: "POST", Path: "/v1/watches",
				Body: map[string]any{"terminal_id": t.ID}})
		}
		// A permission prompt: offered to the owner of the Turn that holds
		// the pane, or to anyone when no Turn holds it.
		if t.ScreenState == ScreenAwaitingApproval && !c.HeldByOther {
			turnID, path := "", "/v1/terminals/"+t.ID+"/approval"
			if c.CurrentTurn != nil {
				turnID, path = c.CurrentTurn.ID, "/v1/turns/"+c.CurrentTurn.ID+"/approval"
			}
			if c.CurrentTurn == nil || c.CurrentTurn.State == TurnAwaitingApproval {
				av, err := s.offerApproval(ctx, p, t, turnID)
				if err != nil {
					// One pane whose prompt cannot be read degrades its own
					// row, never the list.
					av = unreadablePrompt(err)
					c.Terminal.Warnings = append(c.Terminal.Warnings, av.Reason)
				}
				c.Approval = av
				if av != nil && !av.ManualRequired {
					ds := make([]string, len(av.Decisions))
					for i, d := range av.Decisions {
						ds[i] = string(d)
					}
					c.Actions = append(c.Actions, Action{Name: "approve", Method: "POST", Path: path,
						Body: map[string]any{"decision": ds}})
				}
			}
		}
	}
	return c, nil
}

// Conversations lists every agent terminal, observed now. It sends no input.
func (s *Service) Conversations(ctx context.Context) ([]Conversation, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return nil, err
	}
	if s.terminals == nil {
		return nil, E(CodeUnavailable, "terminal discovery is not configured")
	}
	ts, err := s.terminals.Discover(ctx)
	if err != nil {
		return nil, &Error{Code: CodeUnavailable, Message: "terminal discovery failed", Err: err}
	}
	out := make([]Conversation, 0, len(ts))
	for _, t := range ts {
		c, err := s.conversationOf(ctx, p, t)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Conversation returns one conversation, observed now.
func (s *Service) Conversation(ctx context.Context, id string) (Conversation, error) {
	all, err := s.Conversations(ctx)
	if err != nil {
		return Conversation{}, err
	}
	for _, c := range all {
		if c.ID == id {
			return c, nil
		}
	}
	return Conversation{}, E(CodeConversationNotFound, "no conversation "+id+" (the pane closed or its agent restarted; list again)")
}

// Readiness is the doctor's verdict.
type Readiness string

const (
	Ready          Readiness = "ready"
	PartiallyReady Readiness = "partially_ready"
	NotReady       Readiness = "not_ready"
)

// DoctorReport is what GET /v1/doctor shows.
type DoctorReport struct {
	Status        Readiness
	Reasons       []string
	Terminals     TerminalDiagnosis
	StoreWritable bool
	StoreProblem  string
	Hosts         []Host
}

// Doctor checks tmux, the agents in panes, the store and the hosts.
func (s *Service) Doctor(ctx context.Context) (DoctorReport, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return DoctorReport{}, err
	}
	r := DoctorReport{Status: Ready, Reasons: []string{}}
	if s.terminals != nil {
		d, err := s.terminals.Diagnose(ctx)
		if err != nil {
			return DoctorReport{}, fmt.Errorf("diagnose terminals: %w", err)
		}
		r.Terminals = d
		r.Reasons = append(r.Reasons, d.Problems()...)
	} else {
		r.Reasons = append(r.Reasons, "terminal discovery is not configured")
	}
	if err := s.store.CheckWritable(ctx); err != nil {
		r.StoreProblem = err.Error()
		r.Reasons = append(r.Reasons, "the store is not writable: "+err.Error())
	} else {
		r.StoreWritable = true
	}
	hosts, err := s.store.Hosts(ctx)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return DoctorReport{}, err
	}
	for _, h := range hosts {
		if p.CanSeeHost(h.ID) {
			r.Hosts = append(r.Hosts, h)
		}
	}
	if p.Operator && len(hosts) == 0 {
		r.Reasons = append(r.Reasons, "no host is registered: POST /v1/hosts (or akk hosts add) to receive webhooks")
	}
	switch {
	case s.terminals == nil || !r.Terminals.Tmux.Found || !r.StoreWritable:
		r.Status = NotReady
	case len(r.Reasons) > 0:
		r.Status = PartiallyReady
	}
	return r, nil
}
