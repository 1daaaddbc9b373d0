package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// BenchmarkE2EBackend measures, on the newest pinned Codex with a real TUI
// in tmux and the fake model, what the Codex backend costs and gives: the
// list's latency with the daemon's threads (--codex-backend on) and
// without (off), and a Send's time from the request to its completion
// webhook through the daemon (conversation_id) and through the pane
// (terminal_id). Medians of several runs, printed.
func BenchmarkE2EBackend(b *testing.B) {
	agents := agenttest.RequireAgents(b, "codex")
	a := agents[len(agents)-1]
	e := agenttest.New(b, a, agenttest.Options{})
	e.StartReady()
	first := "Say hello before the benchmark"
	e.Submit(first)
	e.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken(first))
	e.WaitIdle(agenttest.TurnTimeout)
	rec := newReceiver(b, "")
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	list := func(d *daemon, token string) time.Duration {
		var ds []time.Duration
		for range 30 {
			start := time.Now()
			call(b, "GET", d.url+"/v1/conversations", token, "", nil)
			ds = append(ds, time.Since(start))
		}
		return median(ds)
	}
	off := startDaemon(b, b.TempDir(), map[string]string{"AKK_TMUX_SOCKETS": e.SocketPath(), "AKK_CODEX_BACKEND": "off"})
	listOff := list(off, off.token)
	off.stop()
	d := startDaemon(b, b.TempDir(), map[string]string{"AKK_TMUX_SOCKETS": e.SocketPath()})
	defer d.stop()
	var host hostCreds
	call(b, "POST", d.url+"/v1/hosts", d.token, `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
	listOn := list(d, host.Token)

	timed := func(body func(i int) string) time.Duration {
		var ds []time.Duration
		for i := range 5 {
			e.WaitIdle(agenttest.TurnTimeout)
			findBackendRow(b, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
			findRowB(b, d.url, host.Token, e.ProjectDir)
			start := time.Now()
			var s sendAnswer
			if code := call(b, "POST", d.url+"/v1/turns", host.Token, body(i), &s); code != 202 {
				b.Fatalf("send: %d %+v", code, s)
			}
			rec.waitTurn(b, s.TurnID, "turn.completed", 60*time.Second)
			ds = append(ds, time.Since(start))
		}
		return median(ds)
	}
	row := findBackendRow(b, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
	term := findRowB(b, d.url, host.Token, e.ProjectDir)
	backend := timed(func(i int) string {
		return `{"conversation_id":"` + row.ConversationID + `","request":"Backend benchmark request ` + fmt.Sprint(i) + `"}`
	})
	terminal := timed(func(i int) string {
		return `{"terminal_id":"` + term + `","request":"Terminal benchmark request ` + fmt.Sprint(i) + `"}`
	})
	fmt.Printf("codex backend (%s): list %.1f ms with the daemon's threads, %.1f ms without; send to completion webhook %.0f ms through the daemon, %.0f ms through the pane (medians)\n",
		a.Name(), ms(listOn), ms(listOff), ms(backend), ms(terminal))
}

// findRowB waits for the pane's row to offer send and returns its terminal.
func findRowB(b *testing.B, url, token, project string) string {
	b.Helper()
	return findRow(b, url, token, project, 30*time.Second, hasSend).Terminal.TerminalID
}
