// Package storetest opens stores for tests: SQLite in a test's own folder,
// or a database of its own on a PostgreSQL server the test package starts
// (Debian's postgresql, in a temporary folder, stopped by its pid when the
// package's tests end).
package storetest

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"akk/persistence"
)

// Engines are the store engines a store test runs on.
var Engines = []string{"sqlite", "postgres"}

// Engine is the engine Open uses: AKK_TEST_STORE, sqlite by default.
func Engine() string {
	if e := os.Getenv("AKK_TEST_STORE"); e != "" {
		return e
	}
	return "sqlite"
}

// Open opens a new store on Engine().
func Open(t testing.TB) *persistence.Store {
	t.Helper()
	return OpenOn(t, Engine())
}

// OpenOn opens a new, empty store on engine ("sqlite" or "postgres"),
// closed when the test ends.
func OpenOn(t testing.TB, engine string) *persistence.Store {
	t.Helper()
	var s *persistence.Store
	var err error
	switch engine {
	case "sqlite":
		s, err = persistence.Open(context.Background(), filepath.Join(t.TempDir(), "akk.db"))
	case "postgres":
		s, err = persistence.OpenPostgres(context.Background(), NewDatabase(t))
	default:
		t.Fatalf("AKK_TEST_STORE=%q: want sqlite or postgres", engine)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// SharedEnv names the socket folder of a PostgreSQL server already running
// (started by `go run ./persistence/storetest/pgserve`, as scripts/test.sh
// does): the packages' tests then make their databases there instead of
// each starting a server of its own.
const SharedEnv = "AKK_TEST_POSTGRES_DIR"

// Main runs a package's tests, then stops the PostgreSQL server they
// started, if any, after running each of after. Call it from TestMain.
func Main(m *testing.M, after ...func()) {
	code := m.Run()
	for _, f := range after {
		f()
	}
	server.Stop()
	server.remove()
	os.Exit(code)
}

// Server is a PostgreSQL server of the tests' own: a temporary folder,
// run as the postgres user when the tests run as root (PostgreSQL refuses
// root), listening only on a socket in that folder.
type Server struct {
	once sync.Once
	err  error

	dir, data string
	bin       string
	cred      *syscall.Credential
	cmd       *exec.Cmd
	exited    chan struct{} // closed when postgres has exited
	mu        sync.Mutex
	n         int
	shared    bool // a server this process did not start (SharedEnv)

	// tcp is the address the server also listens on (StartServerTCP), and
	// trusts connections from its /24.
	tcpHost string
	tcpPort int
}

var server Server

// NewDatabase returns the URL of a new, empty database on the package's
// PostgreSQL server (started at the first call). Without PostgreSQL the
// test skips, or fails when AKK_REQUIRE_TOOLS=1.
func NewDatabase(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (make check): no PostgreSQL")
	}
	server.once.Do(func() { server.err = server.init() })
	if server.err != nil {
		skipOrFail(t, server.err)
	}
	return server.NewDatabase(t)
}

// Prepare starts the package's PostgreSQL server now when Engine() is
// postgres: from TestMain, for tests that make their databases in a
// synctest bubble, where the server's start (it polls for the server with
// sleeps while a goroutine waits for its process) could not go on. An
// error is reported by NewDatabase.
func Prepare() {
	if !flag.Parsed() {
		flag.Parse()
	}
	if Engine() == "postgres" && !testing.Short() {
		server.once.Do(func() { server.err = server.init() })
	}
}

func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errNoPostgres) && os.Getenv("AKK_REQUIRE_TOOLS") != "1" {
		t.Skip(err)
	}
	t.Fatal(err)
}

// StartServer starts a PostgreSQL server for one test (one it may stop and
// start again), stopped and removed when the test ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (make check): no PostgreSQL")
	}
	p := &Server{}
	if err := p.init(); err != nil {
		p.Stop()
		p.remove()
		skipOrFail(t, err)
	}
	t.Cleanup(func() { p.Stop(); p.remove() })
	return p
}

// StartServerTCP is StartServer, the server also listening on host (an
// IPv4 address of this machine) and trusting connections from its /24:
// for nodes that reach it over a network (TCPURL).
func StartServerTCP(t testing.TB, host string) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (make check): no PostgreSQL")
	}
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p := &Server{tcpHost: host, tcpPort: port}
	if err := p.init(); err != nil {
		p.Stop()
		p.remove()
		skipOrFail(t, err)
	}
	t.Cleanup(func() { p.Stop(); p.remove() })
	return p
}

// TCPURL is the URL of database db on p over TCP (StartServerTCP).
func (p *Server) TCPURL(db string) string {
	return fmt.Sprintf("postgres://akk@%s:%d/%s?sslmode=disable", p.tcpHost, p.tcpPort, db)
}

// NewDatabase creates a new, empty database on p and returns its URL.
func (p *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	p.mu.Lock()
	p.n++
	// The pid keeps the names of packages sharing one server apart.
	name := "t" + strconv.Itoa(os.Getpid()) + "_" + strconv.Itoa(p.n)
	p.mu.Unlock()
	admin, err := sql.Open("pgx", p.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE DATABASE ` + name); err != nil {
		t.Fatal(err)
	}
	return p.URL(name)
}

var errNoPostgres = errors.New("PostgreSQL is not installed (apt-get install postgresql)")

// binDir is the newest installed PostgreSQL's program folder.
func binDir() (string, error) {
	if d := os.Getenv("AKK_POSTGRES_BIN"); d != "" {
		return d, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(found) == 0 {
		return "", errNoPostgres
	}
	sort.Slice(found, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(found[i]))))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(found[j]))))
		return a < b
	})
	return filepath.Dir(found[len(found)-1]), nil
}

// URL is the URL of database db on p.
func (p *Server) URL(db string) string {
	if p.tcpPort != 0 {
		return "postgres://akk@/" + db + "?host=" + p.dir + "&port=" + strconv.Itoa(p.tcpPort) + "&sslmode=disable"
	}
	return "postgres://akk@/" + db + "?host=" + p.dir + "&sslmode=disable"
}

func (p *Server) command(name string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(p.bin, name), args...)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true}
	c.Env = append(os.Environ(), "LC_ALL=C")
	return c
}

// init runs initdb in a new temporary folder, then the server; or, for the
// package-wide server when SharedEnv names one, only checks that it answers.
func (p *Server) init() error {
	if dir := os.Getenv(SharedEnv); dir != "" && p == &server {
		p.dir, p.shared = dir, true
		db, err := sql.Open("pgx", p.URL("postgres"))
		if err != nil {
			return err
		}
		defer db.Close()
		if err := db.Ping(); err != nil {
			return fmt.Errorf("the shared PostgreSQL server (%s): %w", SharedEnv, err)
		}
		return nil
	}
	return p.Init()
}

// Init runs initdb in a new temporary folder, then the server.
func (p *Server) Init() error {
	bin, err := binDir()
	if err != nil {
		return err
	}
	p.bin = bin
	dir, err := os.MkdirTemp("", "akk-pg-")
	if err != nil {
		return err
	}
	p.dir, p.data = dir, filepath.Join(dir, "data")
	if err := os.Mkdir(p.data, 0o700); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("PostgreSQL refuses root and there is no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		for _, d := range []string{dir, p.data} {
			if err := os.Chown(d, uid, gid); err != nil {
				return err
			}
		}
	}
	if out, err := p.command("initdb", "-D", p.data, "-U", "akk", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C").CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if p.tcpHost != "" {
		hba, err := os.OpenFile(filepath.Join(p.data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(hba, "host all all %s/24 trust\n", p.tcpHost)
		if err := hba.Close(); err != nil {
			return err
		}
	}
	return p.Start()
}

// Start runs the server (again) and waits until it answers.
func (p *Server) Start() error {
	log, err := os.OpenFile(filepath.Join(p.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	listen, port := "", "5432"
	if p.tcpHost != "" {
		listen, port = p.tcpHost, strconv.Itoa(p.tcpPort)
	}
	cmd := p.command("postgres", "-D", p.data, "-k", p.dir, "-c", "listen_addresses="+listen, "-p", port, "-c", "fsync=off",
		"-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = log, log
	// A test binary that panics never reaches Main's stop: postgres is told
	// to quit when its parent thread ends, and that thread (locked, never
	// released) ends only with the process.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		started <- cmd.Start()
		select {}
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	db, err := sql.Open("pgx", p.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := db.Ping()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(filepath.Join(p.dir, "postgres.log"))
			return fmt.Errorf("postgres exited: %s", out)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres never answered: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop ends the server by its pid (a fast shutdown: open sessions end) and
// waits until it has exited. Its data stays for Start.
func (p *Server) Stop() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}

// Dir is the folder of the server's socket (and, for a server of its own, its data).
func (p *Server) Dir() string { return p.dir }

// Remove deletes the folder of a server this process started.
func (p *Server) Remove() { p.remove() }

func (p *Server) remove() {
	if p.dir != "" && !p.shared {
		os.RemoveAll(p.dir)
	}
}

// NewLocation returns where a new, empty store of Engine() lives: a SQLite
// file in the test's folder, or a new PostgreSQL database's URL. Open it
// (again, as a restarted daemon would) with OpenLocation.
func NewLocation(t testing.TB) string {
	t.Helper()
	return NewLocationOn(t, Engine())
}

// OpenLocation opens the store at loc, a SQLite file or a postgres:// URL.
// The caller closes it.
func OpenLocation(ctx context.Context, loc string) (*persistence.Store, error) {
	if persistence.IsPostgresURL(loc) {
		return persistence.OpenPostgres(ctx, loc)
	}
	return persistence.Open(ctx, loc)
}
