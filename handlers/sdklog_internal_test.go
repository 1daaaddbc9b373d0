package handlers

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// The MCP SDK's info lines are debug in AKK's log; its warnings stay.
func TestSDKLoggerDemotesInfo(t *testing.T) {
	var buf bytes.Buffer
	log := sdkLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	log.Info("session opened")
	log.With("k", "v").Info("session closed")
	if buf.Len() != 0 {
		t.Fatalf("info reached the log: %q", buf.String())
	}
	log.Warn("a broken stream")
	if !strings.Contains(buf.String(), "a broken stream") {
		t.Fatalf("a warning was dropped: %q", buf.String())
	}
	var dbg bytes.Buffer
	sdkLogger(slog.New(slog.NewTextHandler(&dbg, &slog.HandlerOptions{Level: slog.LevelDebug}))).Info("session opened")
	if !strings.Contains(dbg.String(), "level=DEBUG") {
		t.Fatalf("at debug: %q", dbg.String())
	}
}
