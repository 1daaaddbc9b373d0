package callbacks_test

import (
	"testing"

	"akk/persistence/storetest"
)

// The store is SQLite, or PostgreSQL with AKK_TEST_STORE=postgres (a server
// of this package's own, stopped when its tests end).
func TestMain(m *testing.M) { storetest.Main(m) }
