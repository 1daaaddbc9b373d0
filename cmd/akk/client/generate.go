// Package client is the generated Go client of the AKK REST API.
package client

//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../../../api/openapi.yaml
