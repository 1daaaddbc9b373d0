package handlers

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the daemon's Prometheus collectors.
type Metrics struct {
	Registry   *prometheus.Registry
	requests   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	events     prometheus.Counter
	deliveries *prometheus.CounterVec
	deliverDur prometheus.Histogram
}

// NewMetrics registers the collectors on a fresh registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "akk_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "akk_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "akk_events_total", Help: "Events stored since the daemon started.",
		}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "akk_webhook_deliveries_total", Help: "Webhook delivery attempts by event type and outcome (delivered, retry, failed).",
		}, []string{"type", "outcome"}),
		deliverDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "akk_webhook_delivery_seconds", Help: "Webhook delivery attempt latency.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 15},
		}),
	}
	m.Registry.MustRegister(m.requests, m.duration, m.events, m.deliveries, m.deliverDur,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// EventsStored counts n stored events.
func (m *Metrics) EventsStored(n int64) { m.events.Add(float64(n)) }

// ObserveDelivery records one webhook attempt.
func (m *Metrics) ObserveDelivery(eventType, outcome string, d time.Duration) {
	m.deliveries.WithLabelValues(eventType, outcome).Inc()
	m.deliverDur.Observe(d.Seconds())
}

// Middleware counts requests by their route pattern (never the raw path, so
// ids do not explode the label space).
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		m.requests.WithLabelValues(route, methodLabel(r.Method), strconv.Itoa(status)).Inc()
		m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// methodLabel bounds the method label: a client may send any token as its
// method, and each would be a new series.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}
