package agentpane

import (
	"os"
	"syscall"
	"unsafe"
)

// unreadInput is how many bytes written to the terminal device tty wait
// there for the program in the pane to read them (the device's input
// queue, read without taking anything from it). After a paste, 0 says the
// agent has read every byte of it.
func unreadInput(tty string) (int, error) {
	f, err := os.OpenFile(tty, os.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
