// Package api holds the HTTP contract, api/openapi.yaml, the source of truth
// for every route, body and error. The server and client code is generated
// from it (see handlers/generate.go and cmd/akk/client/generate.go).
package api

import _ "embed"

// Spec is the exact bytes of openapi.yaml, served at GET /openapi.yaml.
//
//go:embed openapi.yaml
var Spec []byte
