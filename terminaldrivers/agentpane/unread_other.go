//go:build !linux

package agentpane

import "errors"

// unreadInput cannot read a terminal device's input queue here.
func unreadInput(string) (int, error) { return 0, errors.ErrUnsupported }
