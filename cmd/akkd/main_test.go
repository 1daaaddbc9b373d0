package main

import (
	"testing"

	"akk/persistence/storetest"
)

// TestE2EPostgresStore starts a PostgreSQL server of this package's own;
// it is stopped when the package's tests end.
func TestMain(m *testing.M) { storetest.Main(m) }
