package domain

import (
	"context"
	"errors"
	"fmt"
)

// Readiness is the doctor's verdict.
type Readiness string

const (
	Ready          Readiness = "ready"
	PartiallyReady Readiness = "partially_ready"
	NotReady       Readiness = "not_ready"
)

// DoctorReport is what the doctor shows.
type DoctorReport struct {
	Status        Readiness
	Reasons       []string
	Terminals     TerminalDiagnosis
	StoreWritable bool
	StoreProblem  string
	Hosts         []Host
}

// DoctorCases is the doctor: it reads the terminals' diagnosis, the
// store's health and the hosts, and nothing else.
type DoctorCases struct {
	basics
	terminals Terminals
}

// Doctor checks tmux, the agents in panes, the store and the hosts.
func (s *DoctorCases) Doctor(ctx context.Context) (DoctorReport, error) {
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
		r.Reasons = append(r.Reasons, "no host is registered: register one (akk hosts add) to receive webhooks")
	}
	switch {
	case s.terminals == nil || !r.Terminals.Tmux.Found || !r.StoreWritable:
		r.Status = NotReady
	case len(r.Reasons) > 0:
		r.Status = PartiallyReady
	}
	return r, nil
}

// WarnDaemonThread is a Codex pane's warning while nothing proves which of
// its daemon's threads it shows.
const WarnDaemonThread = "Codex's threads are held by its shared app-server daemon; this pane's thread is not proven until a native /status probe or an accepted request"
