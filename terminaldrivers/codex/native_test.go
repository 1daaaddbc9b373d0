package codex

import (
	"strings"
	"testing"

	"akk/terminaldrivers/screen"
)

func rows(r ...string) screen.Capture { return screen.Parse(strings.Join(r, "\n")) }

const sid = "01a232b8-0e4c-7a53-935a-9875469f4b51"

var card = []string{
	"/status",
	"  >_ OpenAI Codex (v0.171.0)",
	"  Model:               GPT-5.5 (reasoning medium)",
	"  Directory:           /tmp/akk-fixture-project",
	"  Permissions:         Workspace (Ask for approval)",
	"  Session:             " + sid,
	"  Token usage:         120 total",
}

var idle = []string{
	"› Ask Codex to do anything",
	"",
	"  GPT-5.5 default · /tmp/akk-fixture-project · Fake session title",
}

func TestStatusCard(t *testing.T) {
	p := V0_169_0.As("0.171.0")
	fresh := append(append(append([]string{}, card...), "", ""), idle...)
	got, ok := p.readStatusCard(rows(fresh...))
	if !ok || got.SessionID != sid || got.Version != "0.171.0" || got.Directory != "/tmp/akk-fixture-project" {
		t.Fatalf("fresh card: %+v %v", got, ok)
	}
	noEcho := append(append([]string{}, card[1:]...), idle...)
	if _, ok := p.readStatusCard(rows(noEcho...)); ok {
		t.Error("a card without the echoed command above it")
	}
	later := append(append(append([]string{}, card...), "› a task typed after the card", "• working"), idle...)
	if _, ok := p.readStatusCard(rows(later...)); ok {
		t.Error("a card with a prompt after it is not the last thing above the composer")
	}
	if _, ok := p.readLastCard(rows(later...)); ok {
		t.Error("while working, a card before the person's prompt is not this task's")
	}
	working := append(append(append([]string{"› a task typed before"}, card...), "• slow-1"), idle...)
	if got, ok := p.readLastCard(rows(working...)); !ok || got.SessionID != sid {
		t.Errorf("a card under the prompt, live output after it: %+v %v", got, ok)
	}
	if e, ok := p.currentEffort(rows(idle...)); !ok || e != "" {
		t.Errorf("effort %q %v (default)", e, ok)
	}
}

func TestTypedCommandBothLayouts(t *testing.T) {
	above := rows("› /status      show current session configuration", "  /statusline  configure the status line", "› /status", "  GPT-5.5 default · /tmp/x")
	if !V0_169_0.typedCommand(above, "/status") {
		t.Error("menu above the composer (0.158.0 and later)")
	}
	below := rows("› /status", "  /status      show current session configuration", "  /statusline  configure the status line")
	if !V0_155_1.typedCommand(below, "/status") {
		t.Error("menu under the composer (up to 0.155.1)")
	}
	other := rows("› /statusline", "  /statusline  configure the status line")
	if V0_155_1.typedCommand(other, "/status") {
		t.Error("another command typed")
	}
}
