package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

// procCPU is a process's CPU time so far, its own and its waited-for
// children's (akkd's tmux capture-pane runs), in clock ticks, and its RSS
// in kB.
func procCPU(tb testing.TB, pid int) (ticks int64, rssKB int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields from "state" (3rd of stat): utime 14, stime 15, cutime 16, cstime 17.
	for _, i := range []int{11, 12, 13, 14} {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += n
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, l := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(l, "VmRSS:") {
				rssKB, _ = strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			}
		}
	}
	return ticks, rssKB
}

func clockTicks() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if n, perr := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && perr == nil && n > 0 {
		return n
	}
	return 100
}

// BenchmarkE2EMonitorCPU measures what monitoring costs: akkd (as its own
// process, with the tmux commands it runs) and the tmux servers, in % of one
// core over a 20 s window, with four real panes (two of the newest Claude
// Code and of the newest Codex) idle and unmonitored, then each working on
// a slow task AKK monitors; and akkd's RSS. Run with -benchtime=1x.
func BenchmarkE2EMonitorCPU(b *testing.B) {
	const window = 20 * time.Second
	var envs []*agenttest.Env
	var sockets []string
	for _, a := range newestOfEachKind(agenttest.RequireAgents(b)) {
		for range 2 {
			e := agenttest.New(b, a, agenttest.Options{})
			e.StartReady()
			envs = append(envs, e)
			sockets = append(sockets, e.SocketPath())
		}
	}
	rec := newReceiver(b, "")
	d := startProc(b, b.TempDir(), "AKK_TMUX_SOCKETS="+strings.Join(sockets, ":"))
	var host hostCreds
	call(b, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
	var tmuxPids []int
	var terms []string
	for _, e := range envs {
		terms = append(terms, findRow(b, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend).Terminal.TerminalID)
		out, err := e.Tmux("display-message", "-p", "#{pid}")
		if err != nil {
			b.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(out))
		tmuxPids = append(tmuxPids, pid)
	}
	hz := clockTicks()
	akkd := d.cmd.Process.Pid
	measure := func() (akkdPct, tmuxPct float64, rss int64) {
		a0, _ := procCPU(b, akkd)
		var t0 int64
		for _, p := range tmuxPids {
			n, _ := procCPU(b, p)
			t0 += n
		}
		time.Sleep(window)
		a1, rss := procCPU(b, akkd)
		var t1 int64
		for _, p := range tmuxPids {
			n, _ := procCPU(b, p)
			t1 += n
		}
		secs := window.Seconds()
		return float64(a1-a0) / hz / secs * 100, float64(t1-t0) / hz / secs * 100, rss
	}
	b.ResetTimer()
	idleAkkd, idleTmux, _ := measure()
	var turns []string
	for i, term := range terms {
		var s sendAnswer
		req := fmt.Sprintf("[[akk:slow secs=300 lead=false]] monitor cost probe %d", i)
		if code := call(b, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+req+`"}`, &s); code != 202 {
			b.Fatalf("send: %d %+v", code, s)
		}
		turns = append(turns, s.TurnID)
	}
	for _, id := range turns {
		rec.waitTurn(b, id, "turn.accepted", 60*time.Second)
	}
	workAkkd, workTmux, rss := measure()
	b.StopTimer()
	for _, id := range turns {
		call(b, "POST", d.url+"/v1/turns/"+id+"/cancel", host.Token, "", nil)
	}
	n := float64(len(turns))
	b.ReportMetric(idleAkkd, "idle-akkd-%cpu")
	b.ReportMetric(idleTmux, "idle-tmux-%cpu")
	b.ReportMetric(workAkkd, "akkd-%cpu")
	b.ReportMetric(workTmux, "tmux-%cpu")
	b.ReportMetric((workAkkd+workTmux-idleAkkd-idleTmux)/n, "per-pane-%cpu")
	b.ReportMetric(float64(rss)/1024, "akkd-rss-MB")
	b.ReportMetric(0, "ns/op")
}
