package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"akk/domain"
	"akk/terminaldrivers/screen"
)

// What the packages that answer on screen (approval, interaction) share:
// how a screen region is fingerprinted with the pane's process identity,
// and how a terminal's profile is found.

// Fingerprint is the fingerprint of region r of t's screen, bound to the
// pane, the agent process incarnation, the profile and what the region is
// (kind), so the same text elsewhere or under another process never matches.
func Fingerprint(t domain.Terminal, profile, kind string, r screen.Region) string {
	id := strings.Join([]string{
		t.Pane.Socket, t.Pane.PaneID, t.Process.BootID, strconv.Itoa(t.Process.PID),
		strconv.FormatUint(t.Process.StartTicks, 10), profile, kind,
	}, "\x00")
	return screen.Fingerprint(id, r)
}

// ErrNoProfile: the terminal's agent version has no profile here.
var ErrNoProfile = errors.New("no profile for this agent version")

// Find returns the profile that reads t's agent version, which must be the
// one discovery named. exact is false when the version has no profile of
// its own and borrows its nearest lower neighbour's (see Resolve): such a
// profile may classify the screen, but no prompt is answered with it.
func (r *Registry) Find(t domain.Terminal) (p Profile, exact bool, err error) {
	if !t.Agent.Profiled() {
		return nil, false, fmt.Errorf("%w: %s %s is unprofiled", ErrNoProfile, t.Agent.Kind, t.Agent.Version)
	}
	p, exact, ok := r.Resolve(t.Agent.Kind, t.Agent.Version)
	if !ok || p.Agent().Profile != t.Agent.Profile {
		return nil, false, fmt.Errorf("%w: no profile %s", ErrNoProfile, t.Agent.Profile)
	}
	return p, exact, nil
}

// RegistryOf builds the registry of every profile of drivers.
func RegistryOf(drivers []Driver) (*Registry, error) {
	var profiles []Profile
	for _, d := range drivers {
		profiles = append(profiles, d.Profiles()...)
	}
	return NewRegistry(profiles...)
}

// Sleep waits d, or less when ctx ends; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}
