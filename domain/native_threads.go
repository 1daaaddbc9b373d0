package domain

import (
	"errors"
)

// probeAgain says a status probe typed nothing and may be asked again: the
// pane it was given as ready was not (it changed between the look and the
// probe's own), and the control is supported. Nothing was sent, so asking
// again repeats no input.
func probeAgain(stage AnswerStage, err error) bool {
	return err != nil && stage == AnswerNothing && !errors.Is(err, ErrNativeUnsupported)
}

// isThreadID reports whether id is a complete lower-case UUID.
func isThreadID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i, r := range id {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
				return false
			}
		}
	}
	return true
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
