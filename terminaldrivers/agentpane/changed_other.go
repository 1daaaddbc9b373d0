//go:build !linux

package agentpane

import (
	"errors"

	"akk/domain"
)

// Changed is Linux only (inotify); elsewhere callers keep polling.
func (x *Adapter) Changed(dm domain.DurableMark) (<-chan struct{}, func(), error) {
	return nil, nil, errors.New("change notification needs Linux")
}
