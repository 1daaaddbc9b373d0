package handlers

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"akk/domain"
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

// StateGauges reads the daemon's state at each scrape: Turns by state,
// what waits on a person and for how long, the outbox, the panes listed,
// the monitors running.
func (m *Metrics) StateGauges(read func(context.Context) (domain.Gauges, error)) {
	m.Registry.MustRegister(&stateCollector{read: read})
}

var (
	turnsDesc    = prometheus.NewDesc("akk_turns", "Turns not ended, by state (the store's; every node of a fleet shows the same).", []string{"state"}, nil)
	waitingDesc  = prometheus.NewDesc("akk_waiting", "Turns waiting on a person: a permission prompt (approval) or a question.", []string{"kind"}, nil)
	oldestDesc   = prometheus.NewDesc("akk_oldest_wait_seconds", "How long the longest-waiting of those has waited (0 when none waits).", nil, nil)
	outboxDesc   = prometheus.NewDesc("akk_outbox", "Webhook outbox rows by state (pending, delivered, failed).", []string{"state"}, nil)
	panesDesc    = prometheus.NewDesc("akk_panes", "Agent panes listed now, by agent and screen state.", []string{"agent", "screen_state"}, nil)
	monitorsDesc = prometheus.NewDesc("akk_monitors", "Turn and Watch monitors running in this daemon.", nil, nil)
	scrapeDesc   = prometheus.NewDesc("akk_state_read_ok", "1 when the state above was read, 0 when the store did not answer.", nil, nil)
)

type stateCollector struct {
	read func(context.Context) (domain.Gauges, error)
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{turnsDesc, waitingDesc, oldestDesc, outboxDesc, panesDesc, monitorsDesc, scrapeDesc} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := c.read(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(scrapeDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(scrapeDesc, prometheus.GaugeValue, 1)
	for _, st := range []domain.TurnState{domain.TurnDispatching, domain.TurnWorking, domain.TurnAwaitingApproval, domain.TurnAwaitingInteraction,
		domain.TurnWaitingForHost, domain.TurnStalled, domain.TurnDeliveryUncertain, domain.TurnResponseUncertain} {
		ch <- prometheus.MustNewConstMetric(turnsDesc, prometheus.GaugeValue, float64(g.Turns[st]), string(st))
	}
	ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(g.Turns[domain.TurnAwaitingApproval]), "approval")
	ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(g.Turns[domain.TurnAwaitingInteraction]), "question")
	oldest := 0.0
	if !g.OldestWaiting.IsZero() && g.Now.After(g.OldestWaiting) {
		oldest = g.Now.Sub(g.OldestWaiting).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, oldest)
	for _, st := range []domain.NotificationState{domain.NotificationPending, domain.NotificationDelivered, domain.NotificationFailed} {
		ch <- prometheus.MustNewConstMetric(outboxDesc, prometheus.GaugeValue, float64(g.Notifications[st]), string(st))
	}
	for k, n := range g.Panes {
		ch <- prometheus.MustNewConstMetric(panesDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	ch <- prometheus.MustNewConstMetric(monitorsDesc, prometheus.GaugeValue, float64(g.Monitors))
}
