package agentpane

import (
	"os"
	"syscall"
	"testing"
)

// A terminal device's unread input is counted without being taken: what
// the program has not read is still there after the count, and gone from
// the count once it reads it.
func TestUnreadInputCountsWithoutReading(t *testing.T) {
	master, tty := openPTY(t)
	if got, err := unreadInput(tty); err != nil || got != 0 {
		t.Fatalf("before any input: %d, %v", got, err)
	}
	paste := []byte("\x1b[200~hello\x1b[201~")
	writeUnread(t, master, tty, paste)
	if got, err := unreadInput(tty); err != nil || got != len(paste) {
		t.Fatalf("counted twice: %d unread, %v; want %d (counting took nothing)", got, err, len(paste))
	}
	program, err := os.OpenFile(tty, os.O_RDONLY|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer program.Close()
	buf := make([]byte, 64)
	if k, err := program.Read(buf); err != nil || k != len(paste) {
		t.Fatalf("the program read %d, %v", k, err)
	}
	if got, err := unreadInput(tty); err != nil || got != 0 {
		t.Fatalf("after the program read it: %d, %v", got, err)
	}
}
