package domain_test

import (
	"testing"

	"akk/persistence/storetest"
)

// The store is SQLite, or PostgreSQL with AKK_TEST_STORE=postgres (a server
// of this package's own, started before the tests, which run in synctest
// bubbles, and stopped when they end).
func TestMain(m *testing.M) {
	storetest.Prepare()
	storetest.Main(m)
}
