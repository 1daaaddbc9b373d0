package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

// scaleServer is one isolated tmux server running n stand-ins, one window
// each, every one in its own project folder under one shared home.
type scaleServer struct {
	name, socket string
	pid          int
	projects     []string
	finish, done []string
	ask, asked   []string
}

var scaleServers atomic.Int64 // names each server apart

func startScaleServer(b *testing.B, s agenttest.Standin, n int) *scaleServer {
	b.Helper()
	dir := b.TempDir()
	home := filepath.Join(dir, "home")
	srv := &scaleServer{name: fmt.Sprintf("akk-scale-%d-%d-%d", os.Getpid(), n, scaleServers.Add(1))}
	tmuxCmd := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", srv.name}, args...)...).CombinedOutput()
		if err != nil {
			b.Fatalf("tmux %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for i := range n {
		proj := filepath.Join(dir, fmt.Sprintf("project-%03d", i))
		if err := os.MkdirAll(proj, 0o755); err != nil {
			b.Fatal(err)
		}
		file := func(what string) string { return filepath.Join(dir, fmt.Sprintf("%s-%03d", what, i)) }
		srv.projects = append(srv.projects, proj)
		srv.finish, srv.done, srv.ask, srv.asked = append(srv.finish, file("finish")), append(srv.done, file("done")), append(srv.ask, file("ask")), append(srv.asked, file("asked"))
		cmd := []string{"env", "HOME=" + home, "AKK_STANDIN_DIR=" + s.Recording, "AKK_STANDIN_FINISH=" + file("finish"), "AKK_STANDIN_DONE=" + file("done"),
			"AKK_STANDIN_ASK=" + file("ask"), "AKK_STANDIN_ASKED=" + file("asked"), s.Entry}
		if i == 0 {
			tmuxCmd(append([]string{"-f", "/dev/null", "new-session", "-d", "-s", "scale", "-x", "120", "-y", "40", "-c", proj, "--"}, cmd...)...)
		} else {
			tmuxCmd(append([]string{"new-window", "-d", "-t", "scale", "-c", proj, "--"}, cmd...)...)
		}
	}
	srv.socket = tmuxCmd("display-message", "-p", "#{socket_path}")
	srv.pid, _ = strconv.Atoi(tmuxCmd("display-message", "-p", "#{pid}"))
	b.Cleanup(func() { exec.Command("tmux", "-L", srv.name, "kill-server").Run() })
	return srv
}

// settle waits, up to timeout, until no client is attached to the server;
// it returns how many still are.
func (srv *scaleServer) settle(b *testing.B, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		out, err := exec.Command("tmux", "-L", srv.name, "list-clients", "-F", "#{client_name}").Output()
		if err != nil {
			b.Fatalf("list clients: %v", err)
		}
		n := len(strings.Fields(string(out)))
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// BenchmarkE2EScale measures monitoring at scale with the stand-in agent
// (terminaldrivers/agenttest/standin: a recorded Codex or Claude Code
// working, its pane output replayed at the real pace, its permission
// prompt asked as the real one asked it): for 1, 10 and 100 working panes
// in one tmux server, akkd's CPU (with the tmux commands it runs) and the
// tmux server's, in % of one core over 20 s (a minute at 100 panes), with
// nothing monitored (at 100 panes the mean of a minute before the Watches
// and one after them) and with every pane under an exact Watch once its
// monitor settled, and what monitoring adds (akkd's share plus the tmux
// server's increase); the clients still attached then; akkd's RSS; GET
// /v1/conversations latency; the prompt latency from a permission prompt
// drawn to the watch.approval_observed webhook arriving, every pane asking,
// ten at a time; and the detection latency from the completion record
// being written to the watch.completed webhook arriving. Run with
// -benchtime=1x.
func BenchmarkE2EScale(b *testing.B) {
	for _, kind := range []string{agenttest.KindCodex, agenttest.KindClaude} {
		b.Run(kind, func(b *testing.B) { benchScale(b, kind) })
	}
}

func benchScale(b *testing.B, kind string) {
	s := agenttest.InstallStandin(b, b.TempDir(), kind)
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("panes=%d", n), func(b *testing.B) {
			srv := startScaleServer(b, s, n)
			rec := newReceiver(b, "")
			go func() {
				for range rec.arrived {
				}
			}()
			d := startProc(b, b.TempDir(), "AKK_TMUX_SOCKETS="+srv.socket)
			var hosts []hostCreds
			for i := 0; i < (n+49)/50; i++ {
				var h hostCreds
				call(b, "POST", d.url+"/v1/hosts", d.token(), fmt.Sprintf(`{"name":"h%d","webhook_url":"http://%s/h"}`, i, rec.addr), &h)
				hosts = append(hosts, h)
			}
			rows := waitRows(b, d.url, hosts[0].Token, srv.projects, 60*time.Second)
			hz := clockTicks()
			// The tmux server's own cost wanders by a point or two of a
			// core from one 20 s to the next with 100 stand-ins; longer
			// windows there keep that out of what monitoring adds.
			window := 20 * time.Second
			if n >= 100 {
				window = time.Minute
			}
			akkd := d.cmd.Process.Pid
			measure := func() (akkdPct, tmuxPct float64, rss int64) {
				a0, _ := procCPU(b, akkd)
				t0, _ := procCPU(b, srv.pid)
				time.Sleep(window)
				a1, rss := procCPU(b, akkd)
				t1, _ := procCPU(b, srv.pid)
				return float64(a1-a0) / hz / window.Seconds() * 100, float64(t1-t0) / hz / window.Seconds() * 100, rss
			}
			b.ResetTimer()
			idleAkkd, idleTmux, _ := measure()
			var lists []time.Duration
			for range 10 {
				t0 := time.Now()
				call(b, "GET", d.url+"/v1/conversations", hosts[0].Token, "", nil)
				lists = append(lists, time.Since(t0))
			}
			watchAll := func() []string {
				var watches []string
				for i, p := range srv.projects {
					var w struct {
						WatchID   string `json:"watch_id"`
						WatchMode string `json:"watch_mode"`
					}
					h := hosts[i/50]
					if code := call(b, "POST", d.url+"/v1/watches", h.Token, `{"terminal_id":"`+rows[p]+`"}`, &w); code != 201 || w.WatchMode != "exact_task" {
						b.Fatalf("watch %s: %d %+v", p, code, w)
					}
					watches = append(watches, w.WatchID)
				}
				return watches
			}
			watches := watchAll()
			// Measured once the monitors have settled: a Watch's first
			// looks ask for change reports (a control client attaches)
			// until its record says nothing can be asked; the client ends
			// when no monitor waited on it for a while.
			clients := srv.settle(b, time.Minute)
			workAkkd, workTmux, rss := measure()
			if n >= 100 {
				// The tmux server unmonitored again, after the Watches
				// end: its cost then is the mean of before and after, so
				// a drift of the stand-ins' own over the run is not
				// counted as monitoring's.
				for i, id := range watches {
					if code := call(b, "DELETE", d.url+"/v1/watches/"+id, hosts[i/50].Token, "", nil); code/100 != 2 {
						b.Fatalf("unwatch %s: %d", id, code)
					}
				}
				_, idleTmux2, _ := measure()
				idleTmux = (idleTmux + idleTmux2) / 2
				watches = watchAll()
				srv.settle(b, time.Minute)
			}
			b.StopTimer()
			// Permission prompts, then completions, ten at a time as a
			// fleet's would come: each stand-in is told by a file, and
			// notes when it drew the prompt or wrote the completion.
			inTens := func(tell, noted []string, typ string) []time.Duration {
				var out []time.Duration
				for i := range tell {
					if err := os.WriteFile(tell[i], nil, 0o644); err != nil {
						b.Fatal(err)
					}
					if i%10 == 9 || i == n-1 {
						for j := i - i%10; j <= i; j++ {
							out = append(out, arrival(b, rec, watches[j], typ, noted[j]))
						}
					}
				}
				slices.Sort(out)
				return out
			}
			asks := inTens(srv.ask, srv.asked, "watch.approval_observed")
			lat := inTens(srv.finish, srv.done, "watch.completed")
			slices.Sort(lists)
			b.ReportMetric(idleAkkd, "idle-akkd-%cpu")
			b.ReportMetric(idleTmux, "idle-tmux-%cpu")
			b.ReportMetric(workAkkd, "akkd-%cpu")
			b.ReportMetric(workTmux, "tmux-%cpu")
			b.ReportMetric(workAkkd+workTmux-idleTmux, "added-%cpu")
			b.ReportMetric(float64(rss)/1024, "akkd-rss-MB")
			b.ReportMetric(float64(clients), "clients")
			b.ReportMetric(ms(lists[len(lists)/2]), "list-ms")
			b.ReportMetric(ms(lat[len(lat)/2]), "detect-median-ms")
			b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*95/100)]), "detect-p95-ms")
			b.ReportMetric(ms(asks[len(asks)/2]), "prompt-median-ms")
			b.ReportMetric(ms(asks[min(len(asks)-1, len(asks)*95/100)]), "prompt-p95-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// waitRows waits until every project has a working row; it returns their
// terminal ids.
func waitRows(b *testing.B, url, token string, projects []string, timeout time.Duration) map[string]string {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var list struct{ Conversations []conversationRow }
		call(b, "GET", url+"/v1/conversations", token, "", &list)
		got := map[string]string{}
		for _, c := range list.Conversations {
			if c.Terminal.ScreenState == "working" && slices.Contains(projects, c.Project) {
				got[c.Project] = c.Terminal.TerminalID
			}
		}
		if len(got) == len(projects) {
			return got
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d stand-ins listed working; rows %+v", len(got), len(projects), list.Conversations[:min(2, len(list.Conversations))])
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// arrival waits for what a stand-in notes in a file (a prompt drawn, the
// completion record written) and its Watch's webhook of type typ: the
// time between them.
func arrival(b *testing.B, rec *receiver, watchID, typ, doneFile string) time.Duration {
	b.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		at, ok := rec.arrival(watchID, typ)
		if raw, err := os.ReadFile(doneFile); ok && err == nil && len(raw) > 0 {
			ns, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return at.Sub(time.Unix(0, ns))
		}
		if time.Now().After(deadline) {
			b.Fatalf("watch %s: no %s (webhook %v)", watchID, typ, ok)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
