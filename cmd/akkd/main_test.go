package main

import (
	"testing"

	"akk/persistence/storetest"
)

// TestMain runs the package's tests, then tears down the shared worlds
// (world_test.go) and the PostgreSQL server TestE2EPostgresStore started.
func TestMain(m *testing.M) { storetest.Main(m, closeWorlds) }
