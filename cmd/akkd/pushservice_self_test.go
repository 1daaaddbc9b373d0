package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"
)

// clientFunc lets a test see or change the request webpush-go builds before it is sent.
type clientFunc func(*http.Request) (*http.Response, error)

func (f clientFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

type vapid struct{ priv, pub string }

func newVAPID(t *testing.T) vapid {
	t.Helper()
	priv, pub, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	return vapid{priv, pub}
}

func newClient(t *testing.T) *PushClient {
	t.Helper()
	c, err := NewPushClient()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// send pushes payload with webpush-go and returns the HTTP status.
// edit, if not nil, may change options (e.g. HTTPClient) first.
func send(t *testing.T, endpoint string, c *PushClient, v vapid, payload []byte, edit func(*webpush.Options)) int {
	t.Helper()
	opts := &webpush.Options{
		Subscriber:      "mailto:akk@localhost",
		VAPIDPublicKey:  v.pub,
		VAPIDPrivateKey: v.priv,
		TTL:             60,
		Urgency:         webpush.UrgencyHigh,
	}
	if edit != nil {
		edit(opts)
	}
	sub := &webpush.Subscription{Endpoint: endpoint, Keys: webpush.Keys{P256dh: c.P256dh(), Auth: c.AuthSecret()}}
	resp, err := webpush.SendNotificationWithContext(context.Background(), payload, sub, opts)
	if err != nil {
		t.Fatalf("SendNotification: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestPushServiceDeliversAndDecrypts(t *testing.T) {
	svc := NewPushService(t)
	c := newClient(t)
	v := newVAPID(t)
	ep := svc.Register("alice", c)

	// Wait is started before anything is sent, so it must block and then wake up.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan Push, 1)
	go func() {
		p, err := svc.Wait(ctx, func(p Push) bool { return string(p.Payload) == `{"n":2}` })
		if err != nil {
			t.Error(err)
		}
		got <- p
	}()

	cases := []struct {
		payload []byte
		edit    func(*webpush.Options)
	}{
		{[]byte(`{"n":1}`), nil},
		// Data that itself ends in 0x02 and zeros must survive padding removal.
		{[]byte("tricky\x02\x00\x00"), nil},
		{[]byte{}, nil},
		// A smaller record size means less padding; a topic header is passed through.
		{bytes.Repeat([]byte("x"), 100), func(o *webpush.Options) { o.RecordSize = 256; o.Topic = "t1" }},
		{[]byte(`{"n":2}`), nil},
	}
	for i, tc := range cases {
		if code := send(t, ep, c, v, tc.payload, tc.edit); code != http.StatusCreated {
			t.Fatalf("case %d: status %d, errors %q", i, code, svc.Errors())
		}
	}
	pushes := svc.Pushes()
	if len(pushes) != len(cases) {
		t.Fatalf("got %d pushes, want %d; errors %q", len(pushes), len(cases), svc.Errors())
	}
	for i, p := range pushes {
		if !bytes.Equal(p.Payload, cases[i].payload) {
			t.Errorf("push %d payload %q, want %q", i, p.Payload, cases[i].payload)
		}
		if p.ID != "alice" || p.VAPIDKey != v.pub || p.Urgency != "high" || p.TTL != "60" {
			t.Errorf("push %d = %+v", i, p)
		}
	}
	if pushes[3].Topic != "t1" {
		t.Errorf("topic %q, want t1", pushes[3].Topic)
	}
	if p := <-got; string(p.Payload) != `{"n":2}` {
		t.Errorf("Wait returned %+v", p)
	}
	// Wait also finds a push that arrived before it was called.
	if p, err := svc.Wait(ctx, func(p Push) bool { return p.Topic == "t1" }); err != nil || len(p.Payload) != 100 {
		t.Errorf("Wait for earlier push: %v, %v", p, err)
	}
	if e := svc.Errors(); len(e) != 0 {
		t.Errorf("unexpected errors %q", e)
	}
}

func TestPushServiceWaitTimesOut(t *testing.T) {
	svc := NewPushService(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := svc.Wait(ctx, func(Push) bool { return true }); err == nil {
		t.Fatal("Wait returned without any push")
	}
}

func TestPushServiceWrongVAPIDKeyIs401(t *testing.T) {
	svc := NewPushService(t)
	c := newClient(t)
	ep := svc.Register("bob", c)
	announced, signer := newVAPID(t), newVAPID(t)
	// Sign with signer's private key but announce announced's public key.
	code := send(t, ep, c, vapid{priv: signer.priv, pub: announced.pub}, []byte("hi"), nil)
	if code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", code)
	}
	if len(svc.Pushes()) != 0 {
		t.Error("push was recorded")
	}
	if e := svc.Errors(); len(e) != 1 || !strings.Contains(e[0], "signature") {
		t.Errorf("errors %q", e)
	}
}

func TestPushServiceGoneIs410(t *testing.T) {
	svc := NewPushService(t)
	c := newClient(t)
	v := newVAPID(t)
	ep := svc.Register("carol", c)
	if code := send(t, ep, c, v, []byte("first"), nil); code != http.StatusCreated {
		t.Fatalf("status %d before Gone", code)
	}
	svc.Gone("carol")
	if code := send(t, ep, c, v, []byte("second"), nil); code != http.StatusGone {
		t.Fatalf("status %d, want 410", code)
	}
	if r := svc.Refused(); len(r) != 1 || r[0] != "carol" {
		t.Errorf("Refused() = %q", r)
	}
	if p := svc.Pushes(); len(p) != 1 || string(p[0].Payload) != "first" {
		t.Errorf("Pushes() = %+v", p)
	}
}

func TestPushServiceUnknownIs404(t *testing.T) {
	svc := NewPushService(t)
	c := newClient(t)
	if code := send(t, svc.URL+"/push/nobody", c, newVAPID(t), []byte("hi"), nil); code != http.StatusNotFound {
		t.Fatalf("status %d, want 404", code)
	}
	if r := svc.Refused(); len(r) != 1 || r[0] != "nobody" {
		t.Errorf("Refused() = %q", r)
	}
}

// signJWT makes an ES256 JWT by hand, so claims webpush-go never sends can be tried.
func signJWT(t *testing.T, privB64 string, hdr string, claims map[string]any) string {
	t.Helper()
	raw, err := pushB64.DecodeString(privB64)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
	if err != nil {
		t.Fatal(err)
	}
	cj, _ := json.Marshal(claims)
	signing := pushB64.EncodeToString([]byte(hdr)) + "." + pushB64.EncodeToString(cj)
	digest := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, priv, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signing + "." + pushB64.EncodeToString(sig)
}

func TestPushServiceRejectsBadRequests(t *testing.T) {
	svc := NewPushService(t)
	c := newClient(t)
	v := newVAPID(t)
	ep := svc.Register("dave", c)
	now := time.Now().Unix()
	good := map[string]any{"aud": svc.URL, "exp": now + 3600, "sub": "mailto:x@localhost"}
	with := func(k string, val any) map[string]any {
		m := map[string]any{}
		for kk, vv := range good {
			m[kk] = vv
		}
		if val == nil {
			delete(m, k)
		} else {
			m[k] = val
		}
		return m
	}
	const hdr = `{"alg":"ES256","typ":"JWT"}`
	// rewrite returns an option edit whose HTTP client changes the request before sending it.
	rewrite := func(f func(*http.Request)) func(*webpush.Options) {
		return func(o *webpush.Options) {
			o.HTTPClient = clientFunc(func(r *http.Request) (*http.Response, error) {
				f(r)
				return http.DefaultClient.Do(r)
			})
		}
	}
	token := func(h string, claims map[string]any) func(*http.Request) {
		return func(r *http.Request) {
			r.Header.Set("Authorization", "vapid t="+signJWT(t, v.priv, h, claims)+", k="+v.pub)
		}
	}
	cases := []struct {
		name string
		f    func(*http.Request)
		want int
		why  string
	}{
		{"hand-made good token", token(hdr, good), 201, ""},
		{"wrong aud", token(hdr, with("aud", "http://example.com")), 401, "aud"},
		{"expired", token(hdr, with("exp", now-10)), 401, "exp"},
		{"exp beyond 24h", token(hdr, with("exp", now+25*3600)), 401, "24h"},
		{"no sub", token(hdr, with("sub", nil)), 401, "sub"},
		{"alg none", token(`{"alg":"none","typ":"JWT"}`, good), 401, "ES256"},
		{"old WebPush scheme", func(r *http.Request) { r.Header.Set("Authorization", "WebPush x") }, 401, "vapid"},
		{"no TTL", func(r *http.Request) { r.Header.Del("TTL") }, 400, "TTL"},
		{"aesgcm", func(r *http.Request) { r.Header.Set("Content-Encoding", "aesgcm") }, 400, "Content-Encoding"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(svc.Errors())
			if code := send(t, ep, c, v, []byte("x"), rewrite(tc.f)); code != tc.want {
				t.Fatalf("status %d, want %d; errors %q", code, tc.want, svc.Errors())
			}
			if tc.why == "" {
				return
			}
			e := svc.Errors()
			if len(e) != before+1 || !strings.Contains(e[before], tc.why) {
				t.Errorf("errors %q, want a new one mentioning %q", e[before:], tc.why)
			}
		})
	}

	// Encrypting to the right public key but the wrong auth secret fails decryption.
	other := newClient(t)
	wrongAuth := &PushClient{Priv: c.Priv, Auth: other.Auth}
	if code := send(t, ep, wrongAuth, v, []byte("x"), nil); code != http.StatusBadRequest {
		t.Errorf("wrong auth secret: status %d, want 400", code)
	}
	if e := svc.Errors(); !strings.Contains(e[len(e)-1], "decrypt") {
		t.Errorf("last error %q", e[len(e)-1])
	}
	if n := len(svc.Pushes()); n != 1 {
		t.Errorf("%d pushes accepted, want only the hand-made good one", n)
	}
}

// TestWebpushGoClaims records what webpush-go v1.4.0 actually puts in its VAPID JWT.
func TestPushServiceWebpushGoClaims(t *testing.T) {
	svc := NewPushService(t)
	c := newClient(t)
	ep := svc.Register("eve", c)
	var claims struct {
		Aud string
		Exp int64
		Sub string
	}
	var hdr map[string]string
	spy := func(o *webpush.Options) {
		o.VapidExpiration = time.Now().Add(time.Hour) // ignored by v1.4.0, see below
		o.HTTPClient = clientFunc(func(r *http.Request) (*http.Response, error) {
			tok := strings.TrimPrefix(strings.Split(r.Header.Get("Authorization"), ",")[0], "vapid t=")
			parts := strings.Split(tok, ".")
			if err := decodePushJSON(parts[0], &hdr); err != nil {
				t.Error(err)
			}
			if err := decodePushJSON(parts[1], &claims); err != nil {
				t.Error(err)
			}
			return http.DefaultClient.Do(r)
		})
	}
	if code := send(t, ep, c, newVAPID(t), []byte("x"), spy); code != http.StatusCreated {
		t.Fatalf("status %d: %q", code, svc.Errors())
	}
	t.Logf("header %v, aud %q, sub %q, exp in %v", hdr, claims.Aud, claims.Sub, time.Until(time.Unix(claims.Exp, 0)).Round(time.Minute))
	if claims.Aud != svc.URL {
		t.Errorf("aud %q, want %q", claims.Aud, svc.URL)
	}
	// webpush-go prefixes "mailto:" to any subscriber not starting with "https:",
	// even one that already starts with "mailto:".
	if claims.Sub != "mailto:mailto:akk@localhost" {
		t.Logf("sub is now %q (webpush-go changed its behaviour)", claims.Sub)
	}
	// Options.VapidExpiration is not used for the exp claim: it is always now + 12h.
	if d := time.Until(time.Unix(claims.Exp, 0)); d < 11*time.Hour || d > 13*time.Hour {
		t.Logf("exp is now %v ahead (webpush-go changed its behaviour)", d)
	}
}
