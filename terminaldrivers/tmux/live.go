package tmux

import (
	"bufio"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// acceptConn is the __SO_ACCEPTCON flag of /proc/net/unix: a listening socket.
const acceptConn = "00010000"

// Live splits sockets into those a tmux server listens on and stale ones, a
// server that died left behind. /proc/net/unix names listening sockets
// without touching them; a socket it does not name (a server in another
// network namespace, or no /proc) is probed with a connect closed at once,
// and only a refused connect makes it stale.
func Live(procRoot string, sockets []string) (live, stale []string) {
	listening := listeningSockets(procRoot)
	for _, s := range sockets {
		if listening[s] || !refused(s) {
			live = append(live, s)
		} else {
			stale = append(stale, s)
		}
	}
	return live, stale
}

func listeningSockets(procRoot string) map[string]bool {
	if procRoot == "" {
		procRoot = "/proc"
	}
	f, err := os.Open(filepath.Join(procRoot, "net", "unix"))
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// Num RefCount Protocol Flags Type St Inode Path
		f := strings.Fields(sc.Text())
		if len(f) >= 8 && f[3] == acceptConn && strings.HasPrefix(f[7], "/") {
			out[f[7]] = true
		}
	}
	return out
}

func refused(socket string) bool {
	c, err := net.DialTimeout("unix", socket, time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist)
}
