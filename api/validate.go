package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

var (
	routerOnce sync.Once
	router     routers.Router
	routerErr  error
)

// ValidateCall checks one call against the contract as the daemon's own
// request validator does: method and path name a route, and body (nil for
// none) satisfies its request schema. Authentication is not checked. It
// is how tests prove an advertised action is callable as given.
func ValidateCall(method, path string, body any) error {
	routerOnce.Do(func() {
		spec, err := openapi3.NewLoader().LoadFromData(Spec)
		if err != nil {
			routerErr = err
			return
		}
		spec.Servers = nil
		router, routerErr = legacy.NewRouter(spec)
	})
	if routerErr != nil {
		return fmt.Errorf("load contract: %w", routerErr)
	}
	var rdr *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rdr = bytes.NewReader(b)
	}
	var req *http.Request
	var err error
	if rdr != nil {
		req, err = http.NewRequest(method, "http://akk.invalid"+path, rdr)
		req.Header.Set("Content-Type", "application/json")
	} else {
		req, err = http.NewRequest(method, "http://akk.invalid"+path, nil)
	}
	if err != nil {
		return err
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}
