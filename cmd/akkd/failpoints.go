//go:build failpoints

package main

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"akk/domain"
)

// A test build only (go build -tags failpoints). The daemon kills itself
// with SIGKILL at the input stage AKK_FAILPOINT names (see
// domain.Failpoint), as a crash there would.
func init() {
	// AKK_CLOCK_OFFSET: this daemon's clock runs that far apart (a
	// machine whose clock is wrong), e.g. -20s.
	if off, err := time.ParseDuration(os.Getenv("AKK_CLOCK_OFFSET")); err == nil {
		clockOffset = off
	}
	if fail := os.Getenv("AKK_FAILERR"); fail != "" {
		stages := strings.Split(fail, ",")
		domain.FailError = func(s string) error {
			if slices.Contains(stages, s) {
				return errors.New("injected failure at " + s)
			}
			return nil
		}
	}
	stage := os.Getenv("AKK_FAILPOINT")
	if stage == "" {
		return
	}
	domain.Failpoint = func(s string) {
		if s == stage {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
}
