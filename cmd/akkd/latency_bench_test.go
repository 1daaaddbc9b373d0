package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

// completionSeen polls the agent's record files every millisecond and
// notes when a new durable completion record (Claude Code: turn_duration;
// Codex: task_complete) first appears in them.
type completionSeen struct {
	e    *agenttest.Env
	mu   sync.Mutex
	seen []time.Time
	stop chan struct{}
	done chan struct{}
}

func watchCompletions(e *agenttest.Env) *completionSeen {
	c := &completionSeen{e: e, stop: make(chan struct{}), done: make(chan struct{})}
	marker := `"turn_duration"`
	if e.Agent.Kind == "codex" {
		marker = `"task_complete"`
	}
	count := func() int {
		n := 0
		for _, p := range e.TranscriptPaths() {
			f, err := os.Open(p)
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				if strings.Contains(sc.Text(), marker) {
					n++
				}
			}
			f.Close()
		}
		return n
	}
	go func() {
		defer close(c.done)
		known := count()
		sizes := map[string]int64{}
		for {
			select {
			case <-c.stop:
				return
			case <-time.After(time.Millisecond):
			}
			grew := false
			for _, p := range e.TranscriptPaths() {
				if st, err := os.Stat(p); err == nil && st.Size() != sizes[p] {
					sizes[p], grew = st.Size(), true
				}
			}
			if !grew {
				continue
			}
			if n := count(); n > known {
				now := time.Now()
				c.mu.Lock()
				for ; known < n; known++ {
					c.seen = append(c.seen, now)
				}
				c.mu.Unlock()
			}
		}
	}()
	return c
}

func (c *completionSeen) close() { close(c.stop); <-c.done }

func (c *completionSeen) nth(i int) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < len(c.seen) {
		return c.seen[i], true
	}
	return time.Time{}, false
}

// arrival returns when the receiver got the first delivery of typ for id.
func (r *receiver) arrival(id, typ string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.got {
		if strings.Contains(string(d.body), `"type":"`+typ+`"`) && strings.Contains(string(d.body), id) {
			return d.at, true
		}
	}
	return time.Time{}, false
}

// BenchmarkE2EDetectionLatency measures, on every pinned version, the time
// from the agent's durable completion record being written to the
// turn.completed webhook reaching the host. Run it with a fixed count,
// e.g. -benchtime=20x; it reports the median and p95 in milliseconds.
func BenchmarkE2EDetectionLatency(b *testing.B) {
	for _, a := range agenttest.RequireAgents(b) {
		b.Run(a.Name(), func(b *testing.B) {
			e := agenttest.New(b, a, agenttest.Options{})
			e.StartReady()
			rec := newReceiver(b, "")
			d := startDaemon(b, b.TempDir(), map[string]string{"AKK_TMUX_SOCKETS": e.SocketPath()})
			defer d.stop()
			var host hostCreds
			call(b, "POST", d.url+"/v1/hosts", d.token, `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			term := findRow(b, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend).Terminal.TerminalID
			seen := watchCompletions(e)
			defer seen.close()
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var s sendAnswer
				req := fmt.Sprintf("latency probe %d", i)
				if code := call(b, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+req+`"}`, &s); code != 202 {
					b.Fatalf("send: %d %+v", code, s)
				}
				rec.waitTurn(b, s.TurnID, "turn.completed", 60*time.Second)
				got, _ := rec.arrival(s.TurnID, "turn.completed")
				var written time.Time
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
					if w, ok := seen.nth(i); ok {
						written = w
						break
					}
				}
				if written.IsZero() {
					b.Fatalf("turn %d: no completion record seen", i)
				}
				lat = append(lat, got.Sub(written))
				findRow(b, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			}
			b.StopTimer()
			slices.Sort(lat)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(lat[len(lat)/2]), "median-ms")
			b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*95/100)]), "p95-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
