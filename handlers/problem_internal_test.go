package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAClientGoneIsNoError: a request whose client went away (its context
// canceled) is not logged as a failure of the daemon's; any other internal
// error is.
func TestAClientGoneIsNoError(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	defer slog.SetDefault(old)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest("GET", "/v1/conversations", nil).WithContext(ctx)
	writeError(httptest.NewRecorder(), r, fmt.Errorf("turn notifications: %w", context.Canceled))
	if strings.Contains(buf.String(), "request failed") {
		t.Fatalf("a gone client logged as a failure: %s", buf.String())
	}
	writeError(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/conversations", nil), errors.New("disk on fire"))
	if !strings.Contains(buf.String(), "request failed") {
		t.Fatalf("an internal error not logged: %q", buf.String())
	}
}
