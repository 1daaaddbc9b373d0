package codexappserver

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

func TestTmpForeignListing(t *testing.T) {
	mode := os.Getenv("MODE")
	for _, a := range agenttest.RequireAgents(t, "codex") {
		if a.Version != "0.171.0" {
			continue
		}
		t.Run(a.Name(), func(t *testing.T) {
			e := agenttest.New(t, a, agenttest.Options{})
			e.StartReady()
			e.Submit("hello there")
			e.WaitForText(agenttest.TurnTimeout, "Fake model reply")
			e.WaitIdle(agenttest.TurnTimeout)
			ctx := context.Background()
			sock := SocketPath(e.CodexHome)
			c, _ := Dial(ctx, sock, "x")
			ids, _ := c.LoadedThreads(ctx)
			var thread string
			for _, id := range ids {
				th, err := c.ReadThread(ctx, id, false)
				if err == nil && !th.Ephemeral && th.Path != nil {
					thread = id
				}
			}
			c.Close()
			f, err := Dial(ctx, sock, "x")
			if err != nil {
				t.Fatal(err)
			}
			ch := make(chan Message, 4096)
			f.Subscribe(ch)
			if _, err := f.Follow(ctx, thread); err != nil {
				t.Fatal(err)
			}
			turn, err := f.StartTurn(ctx, thread, "go slow "+fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "8"), "m1")
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(300 * time.Millisecond):
					}
					l, err := Dial(ctx, sock, "x")
					if err != nil {
						continue
					}
					if mode != "init" {
						ids, _ := l.LoadedThreads(ctx)
						if mode != "list" {
							for _, id := range ids {
								l.ReadThread(ctx, id, false)
							}
						}
					}
					l.Close()
				}
			}()
			deadline := time.After(60 * time.Second)
			for {
				select {
				case m := <-ch:
					if m.Method == "turn/completed" {
						var ev TurnEvent
						json.Unmarshal(m.Params, &ev)
						if ev.Turn.ID == turn.ID {
							close(stop)
							t.Logf("MODE=%s turn ended: %s", mode, ev.Turn.Status)
							return
						}
					}
				case <-deadline:
					t.Fatal("no end")
				}
			}
		})
	}
}
