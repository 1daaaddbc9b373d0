package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

var (
	failpointOnce sync.Once
	failpointBin  string
	failpointErr  error
)

// failpointBinary builds akkd with the failpoints tag once per test run:
// AKK_FAILPOINT then names the input stage at which it kills itself.
func failpointBinary(t *testing.T) string {
	t.Helper()
	failpointOnce.Do(func() {
		dir, err := os.MkdirTemp("", "akkd-failpoints-")
		if err != nil {
			failpointErr = err
			return
		}
		failpointBin = filepath.Join(dir, "akkd")
		if out, err := exec.Command("go", "build", "-tags", "failpoints", "-o", failpointBin, ".").CombinedOutput(); err != nil {
			failpointErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if failpointErr != nil {
		t.Fatalf("build akkd with failpoints: %v", failpointErr)
	}
	return failpointBin
}

// crashStage is one place input can be cut by a crash, what to do to get
// there, and what the evidence must show after a restart.
type crashStage struct {
	failpoint string
	// task is the request sent (a fake model scenario marker and text).
	task string
	// act drives the Turn to the failpoint (the daemon dies in it).
	act func(c *crashRun, turnID string)
	// final is the webhook that must end the Turn after the restart ("" when
	// the Turn is left where the evidence stops: a prompt left to a person).
	final string
	// asked is how often the model must have been asked the request; ran
	// how often the approved command's output must have reached it.
	asked, ran int
	// times is how many distinct callbacks of a type the Turn makes when
	// more than one (a respond is accepted a second time).
	times map[string]int
	// left proves, with final "", that the prompt or step is still the
	// person's after the restart (shown, never offered again); nil: a
	// permission prompt.
	left func(c *crashRun, turnID string) bool
}

var crashStages = []crashStage{
	{failpoint: "send.reserved", task: "crash before any key", final: "turn.delivery_uncertain", asked: 0},
	{failpoint: "input.pasted", task: "crash after the paste", final: "turn.delivery_uncertain", asked: 0},
	{failpoint: "input.verified", task: "crash before Enter", final: "turn.delivery_uncertain", asked: 0},
	{failpoint: "send.entered", task: "crash after Enter", final: "turn.completed", asked: 1},
	{failpoint: "approval.reserved", task: `[[akk:bash cmd=\"touch akk-crash-a && echo akk-crash-a-$((40+1))\"]] run it`,
		act: approveAfterPrompt, final: "", asked: 1, ran: 0},
	{failpoint: "approval.sent", task: `[[akk:bash cmd=\"touch akk-crash-b && echo akk-crash-b-$((40+2))\"]] run it`,
		act: approveAfterPrompt, final: "turn.completed", asked: 1, ran: 1},
	{failpoint: "respond.entered", task: `[[akk:bash cmd=\"touch akk-crash-c && echo akk-crash-c-$((40+3))\"]] run it`,
		act: rejectThenRespond, final: "turn.completed", asked: 1, ran: 0, times: map[string]int{"turn.accepted": 2}},
	{failpoint: "interaction.reserved", task: "[[akk:ask questions=1]] pick a color", act: answerQuestion, final: "", asked: 1, left: questionLeft},
	{failpoint: "interaction.sent", task: "[[akk:ask questions=1]] pick a colour", act: answerQuestion, final: "turn.completed", asked: 1},
	{failpoint: "cancel.requested", task: "[[akk:slow secs=4]] a slow one", act: cancelWhenWorking, final: "turn.completed", asked: 1},
	{failpoint: "cancel.sent", task: "[[akk:slow secs=30]] a slower one", act: cancelWhenWorking, final: "turn.cancelled", asked: 1},
}

// crashRun is one trial: an agent pane, a receiver, and a daemon that will
// die at the stage's failpoint and is then started again without it.
type crashRun struct {
	t    *testing.T
	e    *agenttest.Env
	rec  *receiver
	d    *proc
	host hostCreds
	term string
}

func (c *crashRun) post(path, body string) {
	req, _ := http.NewRequest("POST", c.d.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.host.Token)
	req.Header.Set("AKK-Conversation", "crash")
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	} // the daemon may die while answering
}

// onlyTurn is the id of the one Turn the trial's host has.
func (c *crashRun) onlyTurn() string {
	var list struct {
		Turns []struct {
			TurnID string `json:"turn_id"`
		} `json:"turns"`
	}
	call(c.t, "GET", c.d.url+"/v1/turns", c.host.Token, "", &list)
	if len(list.Turns) != 1 {
		c.t.Fatalf("the store holds %d Turns, want the one sent", len(list.Turns))
	}
	return list.Turns[0].TurnID
}

func approveAfterPrompt(c *crashRun, turnID string) {
	c.rec.waitTurn(c.t, turnID, "turn.approval_required", 60*time.Second)
	var st approvalStatus
	callConv(c.t, "GET", c.d.url+"/v1/turns/"+turnID, c.host.Token, "", "crash", &st)
	if st.Approval == nil || st.Approval.ManualRequired {
		c.t.Fatalf("no offer to approve: %+v", st)
	}
	c.post("/v1/turns/"+turnID+"/approval", `{"decision":"approve_once"}`)
}

// respondText is what rejectThenRespond answers with.
const respondText = "Skip that and say done"

func rejectThenRespond(c *crashRun, turnID string) {
	c.rec.waitTurn(c.t, turnID, "turn.approval_required", 60*time.Second)
	var st approvalStatus
	callConv(c.t, "GET", c.d.url+"/v1/turns/"+turnID, c.host.Token, "", "crash", &st)
	var res sendAnswer
	if code := callConv(c.t, "POST", c.d.url+"/v1/turns/"+turnID+"/approval", c.host.Token, `{"decision":"reject"}`, "crash", &res); code != 200 {
		c.t.Fatalf("reject: %d %+v", code, res)
	}
	c.rec.waitTurn(c.t, turnID, "turn.waiting_for_host", 60*time.Second)
	findRow(c.t, c.d.url, c.host.Token, c.e.ProjectDir, 30*time.Second, func(r conversationRow) bool { return r.Terminal.ScreenState == "idle" })
	c.post("/v1/turns/"+turnID+"/respond", `{"request":"`+respondText+`"}`)
}

func answerQuestion(c *crashRun, turnID string) {
	c.rec.waitTurn(c.t, turnID, "turn.interaction_required", 60*time.Second)
	var p projection
	deadline := time.Now().Add(20 * time.Second)
	for callConv(c.t, "GET", c.d.url+"/v1/turns/"+turnID+"/interaction", c.host.Token, "", "crash", &p) != 200 || p.ManualRequired {
		if time.Now().After(deadline) {
			c.t.Fatalf("no step to answer: %+v", p)
		}
		p = projection{}
		time.Sleep(100 * time.Millisecond)
	}
	c.post("/v1/turns/"+turnID+"/interaction", answerBody(p, 1, ""))
}

// questionLeft: after a crash between fencing the step and its keys, the
// step is shown as the person's and the pane still asks.
func questionLeft(c *crashRun, turnID string) bool {
	var p projection
	code := callConv(c.t, "GET", c.d.url+"/v1/turns/"+turnID+"/interaction", c.host.Token, "", "crash", &p)
	return code == 200 && p.ManualRequired && agenttest.Questionnaire(c.e.Agent.Kind, c.e.Capture())
}

func cancelWhenWorking(c *crashRun, turnID string) {
	c.rec.waitTurn(c.t, turnID, "turn.accepted", 60*time.Second)
	findRow(c.t, c.d.url, c.host.Token, c.e.ProjectDir, 30*time.Second, func(r conversationRow) bool { return r.Terminal.ScreenState == "working" })
	// The model must have the request before the cancel: Codex records the
	// prompt and shows working a moment before it calls the model, and an
	// interrupt in between means it is never asked (seen once in CI).
	c.e.WaitModelRequest("the task at the model", 60*time.Second, func(r fakemodel.Request) bool {
		return !r.Aux && strings.Contains(r.UserText, "a slow")
	})
	c.post("/v1/turns/"+turnID+"/cancel", "")
}

// crashTally is what the matrix prints per stage.
type crashTally struct {
	trials, repeated, lost, duplicated int
}

// TestE2ECrashMatrix kills the daemon (SIGKILL, from inside, at a
// failpoint) at every stage of a Send, an approval and a cancel, starts it
// again, and checks from the fake model's log and the pane that no input
// was repeated, that the Turn takes the state the evidence proves, and
// that every callback was delivered under one webhook-id. It runs the
// newest pinned version of each agent once per stage; make crash-matrix
// runs AKK_CRASH_TRIALS trials (and AKK_CRASH_AGENTS=all every version)
// and prints the table.
func TestE2ECrashMatrix(t *testing.T) {
	agents := agenttest.RequireAgents(t)
	trials := 1
	if n, err := strconv.Atoi(os.Getenv("AKK_CRASH_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	if os.Getenv("AKK_CRASH_AGENTS") != "all" {
		agents = newestOfEachKind(agents)
	}
	failpointBinary(t)
	var mu sync.Mutex
	tally := map[string]*crashTally{}
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			for _, st := range crashStages {
				for trial := range trials {
					t.Run(fmt.Sprintf("%s/%d", st.failpoint, trial), func(t *testing.T) {
						r := crashTrial(t, a, st)
						mu.Lock()
						x := tally[st.failpoint]
						if x == nil {
							x = &crashTally{}
							tally[st.failpoint] = x
						}
						x.trials++
						x.repeated += r.repeated
						x.lost += r.lost
						x.duplicated += r.duplicated
						mu.Unlock()
					})
				}
			}
		})
	}
	t.Cleanup(func() {
		var b strings.Builder
		fmt.Fprintf(&b, "%-20s %6s %9s %5s %10s\n", "stage", "trials", "repeated", "lost", "duplicated")
		for _, st := range crashStages {
			if x := tally[st.failpoint]; x != nil {
				fmt.Fprintf(&b, "%-20s %6d %9d %5d %10d\n", st.failpoint, x.trials, x.repeated, x.lost, x.duplicated)
			}
		}
		t.Logf("crash matrix (repeated keystrokes, lost and duplicated callbacks):\n%s", b.String())
	})
}

func newestOfEachKind(all []agenttest.Agent) []agenttest.Agent {
	newest := map[string]agenttest.Agent{}
	var kinds []string
	for _, a := range all {
		b, ok := newest[a.Kind]
		if !ok {
			kinds = append(kinds, a.Kind)
		}
		va, _ := agent.ParseVersion(a.Version)
		vb, _ := agent.ParseVersion(b.Version)
		if !ok || vb.Less(va) {
			newest[a.Kind] = a
		}
	}
	var out []agenttest.Agent
	for _, k := range kinds {
		out = append(out, newest[k])
	}
	return out
}

// crashTrial runs one stage once and reports what went wrong (each
// problem also fails the test).
func crashTrial(t *testing.T, a agenttest.Agent, st crashStage) crashTally {
	var out crashTally
	e := agenttest.New(t, a, agenttest.Options{})
	e.StartReady()
	if st.left != nil || strings.HasPrefix(st.failpoint, "interaction.") {
		if a.Kind == agenttest.KindCodex {
			e.PlanMode() // Codex asks questions in Plan mode only; a person switches to it
		}
	}
	c := &crashRun{t: t, e: e, rec: newReceiver(t, "")}
	dir := t.TempDir()
	// A request that never reached the agent is delivery_uncertain once the
	// accept window passes: 3 s, so those trials end soon. Every other
	// trial waits for the agent's record to show its request, which a
	// busy machine can delay past 3 s (it once did, beside other agent
	// tests): their window is the default minute, which a passing trial
	// never waits out.
	window := "60s"
	if st.final == "turn.delivery_uncertain" {
		window = "3s"
	}
	env := []string{"AKK_TMUX_SOCKETS=" + e.SocketPath(), "AKK_ACCEPT_WINDOW=" + window, "AKK_WEBHOOK_RETRY_SCHEDULE=200ms,500ms,1s,2s"}
	c.d = &proc{t: t, bin: failpointBinary(t), dir: dir, env: append(env, "AKK_FAILPOINT="+st.failpoint)}
	c.d.start()
	t.Cleanup(func() { c.d.kill() })
	op := c.d.token()
	call(t, "POST", c.d.url+"/v1/hosts", op, `{"name":"h","webhook_url":"http://`+c.rec.addr+`/h"}`, &c.host)
	c.term = findRow(t, c.d.url, c.host.Token, e.ProjectDir, 30*time.Second, hasSend).Terminal.TerminalID

	task := st.task + " (" + a.Name() + ")"
	c.post("/v1/turns", `{"terminal_id":"`+c.term+`","request":"`+task+`"}`)
	turnID := ""
	if st.act != nil {
		turnID = c.onlyTurn() // the Send itself passes this failpoint
		st.act(c, turnID)
	}
	select {
	case <-c.d.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the daemon did not stop at %s", st.failpoint)
	}
	c.d.cmd = nil
	c.d.env = env // started again without the failpoint
	c.d.start()
	if turnID == "" {
		turnID = c.onlyTurn() // the one reserved before the crash
	}

	if st.final != "" {
		deadline := time.Now().Add(90 * time.Second)
		for {
			if types, _ := c.rec.forTurn(t, turnID); slices.Contains(types, st.final) {
				break
			}
			if time.Now().After(deadline) {
				var s approvalStatus
				callConv(t, "GET", c.d.url+"/v1/turns/"+turnID, c.host.Token, "", "crash", &s)
				types, _ := c.rec.forTurn(t, turnID)
				t.Fatalf("no %s after the restart (got %v); turn %s %+v; screen:\n%s", st.final, types, s.State, s.Approval, e.Capture())
			}
			time.Sleep(50 * time.Millisecond)
		}
	} else {
		// The prompt was fenced before the key: after the restart it is
		// shown, never offered again, and the pane still asks.
		deadline := time.Now().Add(30 * time.Second)
		for {
			var s approvalStatus
			callConv(t, "GET", c.d.url+"/v1/turns/"+turnID, c.host.Token, "", "crash", &s)
			if st.left != nil && st.left(c, turnID) {
				break
			}
			if st.left == nil && s.Approval != nil && s.Approval.ManualRequired && agenttest.ApprovalPrompt(a.Kind, e.Capture()) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the restart: %+v\n%s", s.Approval, e.Capture())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// Input: the model was asked exactly as often as the evidence allows;
	// an approved command ran at most once.
	asked := 0
	typed := strings.ReplaceAll(task, `\"`, `"`) // the task is written JSON-escaped
	for _, r := range e.Model.Requests() {
		// A follow-up that carries a tool result repeats the user text; it is
		// the same turn going on, not the request typed again.
		if !r.Aux && len(r.ToolResults) == 0 && strings.Contains(r.UserText, typed) {
			asked++
		}
	}
	if asked != st.asked {
		out.repeated++
		t.Errorf("the model was asked the request %d times, want %d", asked, st.asked)
	}
	if st.failpoint == "respond.entered" {
		n := 0
		for _, r := range e.Model.Requests() {
			if !r.Aux && len(r.ToolResults) == 0 && strings.Contains(r.UserText, respondText) {
				n++
			}
		}
		if n != 1 {
			out.repeated++
			t.Errorf("the model was asked the response %d times, want 1", n)
		}
	}
	if st.ran > 0 || strings.Contains(st.task, "akk:bash") {
		marker := "akk-crash-a-41"
		switch {
		case strings.Contains(st.task, "akk-crash-b"):
			marker = "akk-crash-b-42"
		case strings.Contains(st.task, "akk-crash-c"):
			marker = "akk-crash-c-43"
		}
		if n := toolResultsWith(e, marker); n != st.ran {
			out.repeated++
			t.Errorf("the command's output reached the model %d times, want %d", n, st.ran)
		}
	}
	// Callbacks: every logical callback under one webhook-id, and the final
	// one arrived.
	ids := map[string]map[string]bool{}
	for _, d := range c.rec.deliveries() {
		var w webhook
		json.Unmarshal(d.body, &w)
		if w.Data["turn_id"] != turnID {
			continue
		}
		if ids[w.Type] == nil {
			ids[w.Type] = map[string]bool{}
		}
		ids[w.Type][d.id] = true
	}
	for typ, set := range ids {
		if want := max(st.times[typ], 1); len(set) > want {
			out.duplicated++
			t.Errorf("%s delivered under %d webhook-ids, want %d", typ, len(set), want)
			// Every delivery and event of the Turn in order, for how the
			// second came.
			for _, d := range c.rec.deliveries() {
				if strings.Contains(string(d.body), turnID) {
					t.Logf("%s %s %s", d.at.Format("15:04:05.000"), d.id, d.body)
				}
			}
			var evs json.RawMessage
			callConv(t, "GET", c.d.url+"/v1/turns/"+turnID+"/events", c.host.Token, "", "crash", &evs)
			t.Logf("the Turn's events: %s", evs)
		}
	}
	if st.final != "" && len(ids[st.final]) != 1 {
		out.lost++
		t.Errorf("%s not delivered", st.final)
	}
	return out
}

// TestE2EWebhookOutage keeps the receiver down for longer than two retry
// steps while a real Turn is accepted and completes: afterwards every
// callback arrives under its original webhook-id, and the Turn's callbacks
// in the order they happened.
func TestE2EWebhookOutage(t *testing.T) {
	agents := newestOfEachKind(agenttest.RequireAgents(t))
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{})
			e.StartReady()
			rec := newReceiver(t, "")
			rec.mu.Lock()
			rec.failNext = 5 // 200ms, 400ms, 800ms, 1.6s, 3.2s: four retry steps down
			rec.mu.Unlock()
			d := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+e.SocketPath(), "AKK_WEBHOOK_RETRY_SCHEDULE=200ms,400ms,800ms,1600ms,3200ms,6s,10s")
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			term := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend).Terminal.TerminalID
			var s sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"through an outage"}`, &s); code != 202 {
				t.Fatalf("send: %d %+v", code, s)
			}
			rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
			var failed, delivered []delivery
			for _, dl := range rec.deliveries() {
				var w webhook
				json.Unmarshal(dl.body, &w)
				if w.Data["turn_id"] != s.TurnID {
					continue
				}
				if dl.status >= 300 {
					failed = append(failed, dl)
				} else {
					delivered = append(delivered, dl)
				}
			}
			if len(failed) != 5 {
				t.Fatalf("%d failed attempts, want the 5 of the outage", len(failed))
			}
			var order []string
			ids := map[string]string{}
			for _, dl := range delivered {
				var w webhook
				json.Unmarshal(dl.body, &w)
				order = append(order, w.Type)
				ids[w.Type] = dl.id
				verify(t, host.WebhookSecret, dl)
			}
			if strings.Join(order, ",") != "turn.accepted,turn.completed" {
				t.Fatalf("delivered in the order %v", order)
			}
			for _, f := range failed {
				var w webhook
				json.Unmarshal(f.body, &w)
				if ids[w.Type] != f.id {
					t.Fatalf("%s retried under webhook-id %s, delivered under %s", w.Type, f.id, ids[w.Type])
				}
			}
		})
	}
}
