package domain

import (
	"context"
	"errors"
)

// PermissionMode is one native permission mode: a semantic id and the
// agent's own label.
type PermissionMode struct {
	Mode  string
	Label string
}

// PermissionState is a pane's permission mode and the modes it offers.
type PermissionState struct {
	Current string
	Modes   []PermissionMode
}

// PermissionControls may be implemented by NativeControls: read and set
// the agent's own permission mode with the profile's closed plan.
type PermissionControls interface {
	// Permissions reads the current mode and the modes offered (Codex
	// opens and closes its menu: keys; Claude Code reads its footer: none).
	Permissions(ctx context.Context, t Terminal) (PermissionState, AnswerStage, error)
	// SetPermissions moves to mode, one proven step at a time, and reads
	// the mode back.
	SetPermissions(ctx context.Context, t Terminal, mode string) (PermissionState, AnswerStage, error)
}

// ErrModeUnavailable: the pane did not offer the mode; it is proven back
// on the mode it had.
var ErrModeUnavailable = errors.New("the pane does not offer this mode")

// PermissionsResult is what a permissions read or change did.
type PermissionsResult struct {
	TerminalID       string
	Outcome          Outcome
	DoNotRetry       bool
	Current          string
	Previous         string
	Modes            []PermissionMode
	AlreadyEffective bool
	Detail           string
}
