package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// pushPayload is what a push carries to the dashboard's service worker.
type pushPayload struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Body    string `json:"body"`
	Tag     string `json:"tag"`
	URL     string `json:"url"`
	TurnID  string `json:"turn_id"`
	Actions []struct {
		Action string `json:"action"`
		Title  string `json:"title"`
		Token  string `json:"token"`
	} `json:"actions"`
}

// token is the one-tap action's token for decision, "" when none.
func (p pushPayload) token(decision string) string {
	for _, a := range p.Actions {
		if a.Action == decision {
			return a.Token
		}
	}
	return ""
}

// postAction posts a one-tap action's token with no other credential.
func postAction(t testing.TB, base, method, token string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+"/v1/actions/"+token, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	json.NewDecoder(resp.Body).Decode(&v)
	return resp.StatusCode, v
}

// Web Push with the real agents: a local stand-in push service checks each
// push's VAPID signature (RFC 8292) and decrypts it (RFC 8291) with the
// subscription's own keys, as a browser's push service and the browser
// would. A permission prompt of a host's Turn sends one push to each
// subscription that may see it: the operator's (with the command), the
// operator's with "hide details" (the agent and project only), the host's
// own; another host hears nothing; a subscription the push service says is
// gone (410) is removed. Malformed subscriptions are refused with nothing
// stored; rotating a host's token removes its subscriptions, and signing
// out of a dashboard session removes the ones it made.
func TestE2EWebPush(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make check): no agents")
	}
	t.Parallel()
	w := newPaneWorld(t)
	model, claude, codex, d, op := w.model, w.claude, w.codex, w.d, w.op
	rec := newReceiver(t, "")
	var a, b hostCreds
	call(t, "POST", d.url+"/v1/hosts", op, `{"name":"a","webhook_url":"http://`+rec.addr+`/a"}`, &a)
	call(t, "POST", d.url+"/v1/hosts", op, `{"name":"b","webhook_url":"http://`+rec.addr+`/b"}`, &b)

	// The key, the same every time it is asked for.
	var key, again struct {
		PublicKey string `json:"public_key"`
	}
	if code := call(t, "GET", d.url+"/v1/ui/push/key", a.Token, "", &key); code != 200 {
		t.Fatalf("push key: %d", code)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(key.PublicKey); err != nil || len(raw) != 65 || raw[0] != 4 {
		t.Fatalf("push key %q", key.PublicKey)
	}
	call(t, "GET", d.url+"/v1/ui/push/key", op, "", &again)
	if again.PublicKey != key.PublicKey {
		t.Fatal("the push key changed")
	}

	ps := NewPushService(t)
	subscribe := func(token, id string, hide bool) *PushClient {
		t.Helper()
		c, err := NewPushClient()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"endpoint": ps.Register(id, c), "expirationTime": nil,
			"keys": map[string]string{"p256dh": c.P256dh(), "auth": c.AuthSecret()}, "hide_details": hide})
		var out map[string]any
		if code := call(t, "POST", d.url+"/v1/ui/push/subscriptions", token, string(body), &out); code != 201 {
			t.Fatalf("subscribe %s: %d %v", id, code, out)
		}
		return c
	}
	listed := func(token string) []string {
		t.Helper()
		var l struct {
			Subscriptions []struct {
				Endpoint string `json:"endpoint"`
			} `json:"subscriptions"`
		}
		if code := call(t, "GET", d.url+"/v1/ui/push/subscriptions", token, "", &l); code != 200 {
			t.Fatalf("list subscriptions: %d", code)
		}
		var ids []string
		for _, s := range l.Subscriptions {
			ids = append(ids, s.Endpoint[strings.LastIndex(s.Endpoint, "/")+1:])
		}
		return ids
	}

	// Bad subscriptions: refused, nothing stored.
	good, _ := NewPushClient()
	for _, bad := range []map[string]any{
		{"endpoint": "http://push.example/x", "keys": map[string]string{"p256dh": good.P256dh(), "auth": good.AuthSecret()}},
		{"endpoint": "ftp://127.0.0.1/x", "keys": map[string]string{"p256dh": good.P256dh(), "auth": good.AuthSecret()}},
		{"endpoint": ps.URL + "/push/bad", "keys": map[string]string{"p256dh": "AAAA", "auth": good.AuthSecret()}},
		{"endpoint": ps.URL + "/push/bad", "keys": map[string]string{"p256dh": good.P256dh(), "auth": "short"}},
		{"endpoint": ps.URL + "/push/bad", "keys": map[string]string{"p256dh": good.P256dh()}},
		{"endpoint": ps.URL + "/push/bad", "keys": map[string]string{"p256dh": good.P256dh(), "auth": good.AuthSecret()}, "token": "x"},
	} {
		body, _ := json.Marshal(bad)
		var p struct {
			Code string `json:"code"`
		}
		if code := call(t, "POST", d.url+"/v1/ui/push/subscriptions", op, string(body), &p); code/100 != 4 || p.Code == "" {
			t.Fatalf("a bad subscription %s: %d %+v", body, code, p)
		}
	}
	if l := listed(op); len(l) != 0 {
		t.Fatalf("refused subscriptions were stored: %v", l)
	}

	opFull := subscribe(op, "op-full", false)
	subscribe(op, "op-hidden", true)
	subscribe(a.Token, "host-a", false)
	subscribe(b.Token, "host-b", false)
	subscribe(op, "op-gone", false)
	ps.Gone("op-gone")
	_ = opFull
	if l := listed(op); !slices.Equal(l, []string{"op-full", "op-hidden", "op-gone"}) {
		t.Fatalf("the operator's subscriptions: %v", l)
	}
	if l := listed(a.Token); !slices.Equal(l, []string{"host-a"}) {
		t.Fatalf("host a's subscriptions: %v", l)
	}

	// Host a's task asks for permission on each agent: one push each, to
	// each subscription that may see it.
	for _, e := range []*agenttest.Env{claude, codex} {
		row := findRow(t, d.url, a.Token, e.ProjectDir, 60*time.Second, hasSend)
		var s sendAnswer
		body, _ := json.Marshal(map[string]string{"terminal_id": row.Terminal.TerminalID, "request": fakemodel.Marker("bash") + " for the push test"})
		if code := call(t, "POST", d.url+"/v1/turns", a.Token, string(body), &s); code != 202 {
			t.Fatalf("send: %d %+v", code, s)
		}
		got := map[string]pushPayload{}
		for _, id := range []string{"op-full", "op-hidden", "host-a"} {
			ctx, cancel := context.WithTimeout(context.Background(), agenttest.Patient(2*time.Minute))
			p, err := ps.Wait(ctx, func(p Push) bool { return p.ID == id && strings.Contains(string(p.Payload), s.TurnID) })
			cancel()
			if err != nil {
				t.Fatalf("%s: no push for %s: %v; pushes %d, refused %v, errors %v", e.Agent.Name(), id, err, len(ps.Pushes()), ps.Refused(), ps.Errors())
			}
			if p.VAPIDKey != key.PublicKey || p.Urgency != "high" || p.TTL == "" {
				t.Fatalf("%s: push to %s signed with %q, urgency %q, ttl %q", e.Agent.Name(), id, p.VAPIDKey, p.Urgency, p.TTL)
			}
			var pl pushPayload
			if err := json.Unmarshal(p.Payload, &pl); err != nil {
				t.Fatalf("payload %q: %v", p.Payload, err)
			}
			got[id] = pl
		}
		kind := map[string]string{agenttest.KindClaude: "Claude Code", agenttest.KindCodex: "Codex"}[e.Agent.Kind]
		full := got["op-full"]
		if full.Type != "turn.approval_required" || full.Title != kind+" asks for permission" || !strings.Contains(full.Body, e.ProjectDir) ||
			!strings.Contains(full.Body, "akk-bash-ran") || full.TurnID != s.TurnID || full.Tag == "" || full.URL != "/#/needs/"+s.TurnID {
			t.Fatalf("%s: the push %+v", e.Agent.Name(), full)
		}
		if hid := got["op-hidden"]; hid.Title != full.Title || strings.Contains(hid.Body, "akk-bash") || !strings.Contains(hid.Body, e.ProjectDir) {
			t.Fatalf("%s: a hidden-details push: %+v", e.Agent.Name(), hid)
		}
		if hp := got["host-a"]; !strings.Contains(hp.Body, "akk-bash-ran") {
			t.Fatalf("%s: host a's push: %+v", e.Agent.Name(), hp)
		}
		// One tap: the operator's push carries Approve once and Reject,
		// each a token of its own; the hidden one carries none (nobody
		// approves what the lock screen did not show).
		if len(full.Actions) != 2 || full.token("approve_once") == "" || full.token("reject") == "" || full.Actions[0].Title != "Approve once" ||
			len(got["op-hidden"].Actions) != 0 || got["host-a"].token("approve_once") == "" || got["host-a"].token("approve_once") == full.token("approve_once") {
			t.Fatalf("%s: the actions %+v / %+v / %+v", e.Agent.Name(), full.Actions, got["op-hidden"].Actions, got["host-a"].Actions)
		}
		tok := full.token("approve_once")
		// Only a POST; the token is said nowhere in the answer.
		if code, v := postAction(t, d.url, "GET", tok); code != 405 || strings.Contains(fmt.Sprint(v), tok) {
			t.Fatalf("%s: GET of an action: %d %v", e.Agent.Name(), code, v)
		}
		if code, v := postAction(t, d.url, "POST", tok); code != 200 || v["outcome"] != "done" {
			t.Fatalf("%s: the tap: %d %v", e.Agent.Name(), code, v)
		}
		done := rec.waitTurn(t, s.TurnID, "turn.completed", 2*time.Minute)
		if fm, _ := done.Data["final_message"].(string); !strings.Contains(fm, "akk-bash-ran") {
			t.Fatalf("%s: the approved Turn ended with %v", e.Agent.Name(), done.Data)
		}
		// Used: gone. The prompt's other tokens (Reject, host a's) answer a
		// prompt that is no longer there: refused, nothing typed.
		if code, v := postAction(t, d.url, "POST", tok); code != 410 || v["code"] != "action_gone" {
			t.Fatalf("%s: a second tap: %d %v", e.Agent.Name(), code, v)
		}
		before := len(model.Requests())
		for _, other := range []string{full.token("reject"), got["host-a"].token("approve_once")} {
			if code, v := postAction(t, d.url, "POST", other); code != 409 {
				t.Fatalf("%s: a tap on a prompt that went: %d %v", e.Agent.Name(), code, v)
			}
		}
		ran, agent := 0, fakemodel.ClientID(e.APIKey())
		for _, r := range model.Requests() {
			for _, tr := range r.ToolResults {
				if r.Client == agent && strings.Contains(tr, "akk-bash-ran") && strings.Contains(r.UserText, "for the push test") {
					ran++
				}
			}
		}
		if ran != 1 || len(model.Requests()) != before {
			t.Fatalf("%s: the command's output reached the model %d times; %d requests after the refused taps", e.Agent.Name(), ran, len(model.Requests())-before)
		}
		findRow(t, d.url, a.Token, e.ProjectDir, 60*time.Second, hasSend)
	}
	if code, v := postAction(t, d.url, "POST", strings.Repeat("A", 43)); code != 404 {
		t.Fatalf("a token that never was: %d %v", code, v)
	}
	// Host b saw none of host a's prompts; the gone one was refused once
	// and removed.
	for _, p := range ps.Pushes() {
		if p.ID == "host-b" || p.ID == "op-gone" {
			t.Fatalf("a push reached %s: %s", p.ID, p.Payload)
		}
	}
	if l := listed(op); !slices.Equal(l, []string{"op-full", "op-hidden"}) {
		t.Fatalf("after a 410 the operator's subscriptions are %v", l)
	}
	if r := ps.Refused(); !slices.Equal(r, []string{"op-gone"}) {
		t.Fatalf("refused pushes: %v", r)
	}
	if e := ps.Errors(); len(e) != 0 {
		t.Fatalf("the push service refused pushes: %v", e)
	}

	// Rotating host a's token removes its subscriptions.
	var rot struct {
		Token string `json:"token"`
	}
	if code := call(t, "POST", d.url+"/v1/hosts/"+a.HostID+"/rotate-token", op, "", &rot); code != 200 || rot.Token == "" {
		t.Fatalf("rotate: %d", code)
	}
	if l := listed(rot.Token); len(l) != 0 {
		t.Fatalf("host a's subscriptions after a token rotation: %v", l)
	}

	// A subscription made in a dashboard session goes when it signs out;
	// one removed by its endpoint goes at once; a second removal is 404.
	jar := &cookieClient{t: t, base: d.url}
	jar.signIn(op)
	c, _ := NewPushClient()
	body, _ := json.Marshal(map[string]any{"endpoint": ps.Register("ui", c), "keys": map[string]string{"p256dh": c.P256dh(), "auth": c.AuthSecret()}})
	if code := jar.do("POST", "/v1/ui/push/subscriptions", string(body)); code != 201 {
		t.Fatalf("subscribe from the dashboard: %d", code)
	}
	if l := listed(op); !slices.Contains(l, "ui") {
		t.Fatalf("the dashboard's subscription: %v", l)
	}
	if code := jar.do("DELETE", "/v1/ui/session", ""); code != 204 {
		t.Fatalf("sign out: %d", code)
	}
	if l := listed(op); slices.Contains(l, "ui") {
		t.Fatalf("signing out left the subscription: %v", l)
	}
	q := url.QueryEscape(ps.URL + "/push/op-hidden")
	if code := call(t, "DELETE", d.url+"/v1/ui/push/subscriptions?endpoint="+q, op, "", nil); code != 204 {
		t.Fatalf("unsubscribe: %d", code)
	}
	var p struct {
		Code string `json:"code"`
	}
	if code := call(t, "DELETE", d.url+"/v1/ui/push/subscriptions?endpoint="+q, op, "", &p); code != 404 {
		t.Fatalf("a second unsubscribe: %d %+v", code, p)
	}
}

// cookieClient is a dashboard session: its cookie, and the same-origin
// proof its writes carry.
type cookieClient struct {
	t      testing.TB
	base   string
	cookie *http.Cookie
}

func (c *cookieClient) signIn(token string) {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.base+"/v1/ui/session", strings.NewReader(`{"token":"`+token+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", c.base)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	for _, k := range resp.Cookies() {
		if k.Name == "akk_session" {
			c.cookie = k
		}
	}
	if resp.StatusCode != 201 || c.cookie == nil {
		c.t.Fatalf("sign in: %d", resp.StatusCode)
	}
}

func (c *cookieClient) do(method, path, body string) int {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Origin", c.base)
	req.AddCookie(c.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
