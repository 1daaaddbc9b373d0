package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/domain"
	"akk/persistence"
	"akk/persistence/memstore"
)

// Store is a store on any engine as tests use it: the domain's ports, the
// commits a test waits on, and retention.
type Store interface {
	domain.Store
	domain.PushReader
	OnChange(fn func(persistence.Change))
	Prune(ctx context.Context, before time.Time) (persistence.Pruned, error)
	Close() error
}

// Memory is the engine of the store in memory (memstore).
const Memory = "memory"

// AllEngines are the engines the store contract tests run on: memory and
// the SQL engines, whose behaviour memory must keep to.
var AllEngines = append([]string{Memory}, Engines...)

// EngineOr is AKK_TEST_STORE, or def when it is unset.
func EngineOr(def string) string {
	if e := os.Getenv("AKK_TEST_STORE"); e != "" {
		return e
	}
	return def
}

// OpenStore opens a new, empty store on engine (memory or a SQL one),
// closed when the test ends.
func OpenStore(t testing.TB, engine string) Store {
	t.Helper()
	if engine == Memory {
		return memstore.New()
	}
	return OpenOn(t, engine)
}

// memories are the stores in memory NewLocationOn made, by location: a
// test opens one again as a restarted daemon reopens its database.
var memories = struct {
	sync.Mutex
	n  int
	at map[string]*memstore.Store
}{at: map[string]*memstore.Store{}}

const memoryPrefix = "memory:"

// NewLocationOn returns where a new, empty store of engine lives: a store
// in memory (for as long as the test), a SQLite file in the test's folder,
// or a new PostgreSQL database's URL. Open it (again) with OpenStoreAt.
func NewLocationOn(t testing.TB, engine string) string {
	t.Helper()
	switch engine {
	case Memory:
		memories.Lock()
		defer memories.Unlock()
		memories.n++
		loc := fmt.Sprintf("%s%d", memoryPrefix, memories.n)
		memories.at[loc] = memstore.New()
		t.Cleanup(func() {
			memories.Lock()
			defer memories.Unlock()
			delete(memories.at, loc)
		})
		return loc
	case "sqlite":
		return filepath.Join(t.TempDir(), "akk.db")
	case "postgres":
		return NewDatabase(t)
	}
	t.Fatalf("AKK_TEST_STORE=%q: want memory, sqlite or postgres", engine)
	return ""
}

// OpenStoreAt opens the store at loc (NewLocationOn). The caller closes it.
func OpenStoreAt(ctx context.Context, loc string) (Store, error) {
	if !strings.HasPrefix(loc, memoryPrefix) {
		s, err := OpenLocation(ctx, loc)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	memories.Lock()
	defer memories.Unlock()
	s, ok := memories.at[loc]
	if !ok {
		return nil, fmt.Errorf("no store in memory at %s", loc)
	}
	return s, nil
}
