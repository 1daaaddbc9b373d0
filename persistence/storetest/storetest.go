// Package storetest opens stores for tests: SQLite in a test's own folder,
// or a database of its own on a PostgreSQL server the test package starts
// (Debian's postgresql, in a temporary folder, stopped by its pid when the
// package's tests end).
package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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

// Main runs a package's tests, then stops the PostgreSQL server they
// started, if any. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	server.stop()
	os.Exit(code)
}

type pgServer struct {
	once   sync.Once
	err    error
	dir    string
	cmd    *exec.Cmd
	exited chan struct{} // closed when postgres has exited
	n      int
	mu     sync.Mutex
}

var server pgServer

// NewDatabase returns the URL of a new, empty database on the package's
// PostgreSQL server (started at the first call). Without PostgreSQL the
// test skips, or fails when AKK_REQUIRE_TOOLS=1.
func NewDatabase(t testing.TB) string {
	t.Helper()
	server.once.Do(func() { server.err = server.start() })
	if server.err != nil {
		if errors.Is(server.err, errNoPostgres) && os.Getenv("AKK_REQUIRE_TOOLS") != "1" {
			t.Skip(server.err)
		}
		t.Fatal(server.err)
	}
	server.mu.Lock()
	server.n++
	name := "t" + strconv.Itoa(server.n)
	server.mu.Unlock()
	admin, err := sql.Open("pgx", server.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE DATABASE ` + name); err != nil {
		t.Fatal(err)
	}
	return server.url(name)
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

func (p *pgServer) url(db string) string {
	return "postgres://akk@/" + db + "?host=" + p.dir + "&sslmode=disable"
}

// start runs initdb and postgres in a new temporary folder, as the
// postgres user when the tests run as root (PostgreSQL refuses root),
// listening only on a socket in that folder, and waits until it answers.
func (p *pgServer) start() error {
	bin, err := binDir()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "akk-pg-")
	if err != nil {
		return err
	}
	p.dir = dir
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("PostgreSQL refuses root and there is no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		for _, d := range []string{dir, data} {
			if err := os.Chown(d, uid, gid); err != nil {
				return err
			}
		}
	}
	run := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(bin, name), args...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
		c.Env = append(os.Environ(), "LC_ALL=C")
		return c
	}
	if out, err := run("initdb", "-D", data, "-U", "akk", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C").CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	log, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	p.cmd = run("postgres", "-D", data, "-k", dir, "-c", "listen_addresses=", "-c", "fsync=off",
		"-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	p.cmd.Stdout, p.cmd.Stderr = log, log
	// A test binary that panics never reaches Main's stop: postgres is told
	// to quit when its parent thread ends, and that thread (locked, never
	// released) ends only with the process.
	p.cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		started <- p.cmd.Start()
		select {}
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	exited := make(chan struct{})
	p.exited = exited
	go func() { p.cmd.Wait(); close(exited) }()
	db, err := sql.Open("pgx", p.url("postgres"))
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
			out, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			return fmt.Errorf("postgres exited: %s", out)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres never answered: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server by its pid (a fast shutdown) and removes its folder.
func (p *pgServer) stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}

// NewLocation returns where a new, empty store of Engine() lives: a SQLite
// file in the test's folder, or a new PostgreSQL database's URL. Open it
// (again, as a restarted daemon would) with OpenLocation.
func NewLocation(t testing.TB) string {
	t.Helper()
	if Engine() == "postgres" {
		return NewDatabase(t)
	}
	return filepath.Join(t.TempDir(), "akk.db")
}

// OpenLocation opens the store at loc, a SQLite file or a postgres:// URL.
// The caller closes it.
func OpenLocation(ctx context.Context, loc string) (*persistence.Store, error) {
	if persistence.IsPostgresURL(loc) {
		return persistence.OpenPostgres(ctx, loc)
	}
	return persistence.Open(ctx, loc)
}
