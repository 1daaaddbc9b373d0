package domain_test

import (
	"testing"

	"akk/persistence/storetest"
)

// The store is the one in memory, or SQLite or PostgreSQL with
// AKK_TEST_STORE=sqlite or postgres (PostgreSQL on a server of this
// package's own, started before the tests, which run in synctest bubbles,
// and stopped when they end).
func TestMain(m *testing.M) {
	storetest.Prepare()
	storetest.Main(m)
}

// newLocation returns where a new, empty store of the tests' engine lives.
func newLocation(t *testing.T) string {
	t.Helper()
	return storetest.NewLocationOn(t, storetest.EngineOr(storetest.Memory))
}
