package handlers

import (
	"bytes"
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"akk/api"
)

// GetHealth answers liveness.
func (s *Server) GetHealth(ctx context.Context, _ GetHealthRequestObject) (GetHealthResponseObject, error) {
	return GetHealth200JSONResponse{Status: HealthStatusOk, Version: s.Version}, nil
}

// GetOpenAPI serves the exact contract file.
func (s *Server) GetOpenAPI(ctx context.Context, _ GetOpenAPIRequestObject) (GetOpenAPIResponseObject, error) {
	return GetOpenAPI200ApplicationyamlResponse{Body: bytes.NewReader(api.Spec), ContentLength: int64(len(api.Spec))}, nil
}

// GetMetrics serves Prometheus metrics.
func (s *Server) GetMetrics(ctx context.Context, _ GetMetricsRequestObject) (GetMetricsResponseObject, error) {
	return metricsResponse{s.Metrics}, nil
}

type metricsResponse struct{ m *Metrics }

func (m metricsResponse) VisitGetMetricsResponse(w http.ResponseWriter) error {
	promhttp.HandlerFor(m.m.Registry, promhttp.HandlerOpts{}).ServeHTTP(w, &http.Request{Header: http.Header{}})
	return nil
}
