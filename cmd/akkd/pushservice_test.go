package main

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// PushClient is one browser's subscription keys: a P-256 key pair and a 16-byte auth secret.
type PushClient struct {
	Priv *ecdh.PrivateKey
	Auth []byte
}

// NewPushClient makes fresh subscription keys, as a browser does in pushManager.subscribe().
func NewPushClient() (*PushClient, error) {
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	auth := make([]byte, 16)
	rand.Read(auth) // never fails (crypto/rand, Go 1.24+)
	return &PushClient{Priv: priv, Auth: auth}, nil
}

// P256dh is the subscription's "p256dh" key: base64url (no padding) of the 65-byte uncompressed point.
func (c *PushClient) P256dh() string { return pushB64.EncodeToString(c.Priv.PublicKey().Bytes()) }

// AuthSecret is the subscription's "auth" key: base64url (no padding) of the 16-byte secret.
func (c *PushClient) AuthSecret() string { return pushB64.EncodeToString(c.Auth) }

// Push is one accepted, decrypted push message.
type Push struct {
	ID       string    // the id from the endpoint URL
	Payload  []byte    // the decrypted plaintext, padding removed
	VAPIDKey string    // the k= public key from the Authorization header, as sent
	Urgency  string    // Urgency header (RFC 8030 §5.3), "" if absent
	TTL      string    // TTL header (RFC 8030 §5.2)
	Topic    string    // Topic header (RFC 8030 §5.4), "" if absent
	Received time.Time // when the push service had the request
}

// PushService is an httptest.Server that accepts Web Push requests at POST /push/<id>.
// It checks VAPID (RFC 8292), the TTL and Content-Encoding headers, and decrypts the
// aes128gcm body (RFC 8291 + RFC 8188) with the PushClient registered for <id>.
type PushService struct {
	*httptest.Server

	mu      sync.Mutex
	clients map[string]*PushClient
	gone    map[string]bool
	pushes  []Push
	refused []string
	errs    []string
	changed chan struct{} // closed and replaced whenever a push is accepted
}

var pushB64 = base64.RawURLEncoding

// NewPushService starts a push service; it is closed when the test ends.
func NewPushService(t testing.TB) *PushService { return NewPushServiceOn(t, "") }

// NewPushServiceTLS starts a push service on ip (a fleet's network, where
// AKK takes only https endpoints) with a certificate of its own for ip;
// caFile holds it, for the daemons' SSL_CERT_FILE.
func NewPushServiceTLS(t testing.TB, ip string) (s *PushService, caFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "push service stand-in"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP(ip)},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "push-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	s = newPushService(t, ip+":0")
	s.Server.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s, caFile
}

// NewPushServiceOn starts a push service listening on addr ("": loopback).
func NewPushServiceOn(t testing.TB, addr string) *PushService {
	s := newPushService(t, addr)
	s.Start() // sets s.URL before any request can be served
	t.Cleanup(s.Close)
	return s
}

func newPushService(t testing.TB, addr string) *PushService {
	s := &PushService{clients: map[string]*PushClient{}, gone: map[string]bool{}, changed: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		s.Server.Listener.Close()
		s.Server.Listener = l
	}
	return s
}

// Register ties id to client c (undoing any Gone) and returns the endpoint URL
// to put in the subscription.
func (s *PushService) Register(id string, c *PushClient) (endpoint string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[id] = c
	delete(s.gone, id)
	return s.URL + "/push/" + id
}

// Gone makes later pushes to id answer 410 Gone, as for an unsubscribed browser.
func (s *PushService) Gone(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone[id] = true
}

// Pushes returns the accepted pushes so far, in arrival order.
func (s *PushService) Pushes() []Push { return lockedCopy(s, func() []Push { return s.pushes }) }

// Refused returns the ids that were answered 410 (Gone) or 404 (unknown), in order.
func (s *PushService) Refused() []string { return lockedCopy(s, func() []string { return s.refused }) }

// Errors returns why requests were rejected with 400 or 401, in order.
func (s *PushService) Errors() []string { return lockedCopy(s, func() []string { return s.errs }) }

// lockedCopy copies a slice field under the lock.
func lockedCopy[T any](s *PushService, get func() []T) []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]T(nil), get()...)
}

// Wait returns the first accepted push (already received or yet to come) for which
// match returns true, or ctx's error if none arrives before ctx is done.
func (s *PushService) Wait(ctx context.Context, match func(Push) bool) (Push, error) {
	seen := 0
	for {
		s.mu.Lock()
		for ; seen < len(s.pushes); seen++ {
			if p := s.pushes[seen]; match(p) {
				s.mu.Unlock()
				return p, nil
			}
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Push{}, fmt.Errorf("no matching push (errors so far: %q): %w", s.Errors(), ctx.Err())
		}
	}
}

// serve handles POST /push/<id>: refuse unknown or gone ids, otherwise check and decrypt.
func (s *PushService) serve(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	if r.URL.Path == "/_pushes" && r.Method == http.MethodGet {
		// What came so far, decrypted: for a browser test that hands a
		// push to the page's service worker as the browser's own push
		// service would.
		var out []json.RawMessage
		for _, p := range s.Pushes() {
			out = append(out, json.RawMessage(p.Payload))
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
		return
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/push/")
	if !ok || r.Method != http.MethodPost {
		http.Error(w, "not a push endpoint", http.StatusNotFound)
		return
	}
	s.mu.Lock()
	client, gone := s.clients[id], s.gone[id]
	if gone || client == nil {
		s.refused = append(s.refused, id)
	}
	s.mu.Unlock()
	if gone || client == nil {
		code := http.StatusNotFound
		if gone {
			code = http.StatusGone
		}
		http.Error(w, http.StatusText(code), code)
		return
	}
	p, code, err := s.check(r, client)
	s.mu.Lock()
	if err != nil {
		s.errs = append(s.errs, fmt.Sprintf("%d %s: %v", code, id, err))
	} else {
		p.ID, p.Received = id, received
		s.pushes = append(s.pushes, p)
		close(s.changed) // wake every Wait; each rescans from where it left off
		s.changed = make(chan struct{})
	}
	s.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), code)
		return
	}
	w.WriteHeader(code) // RFC 8030 §5: 201 Created for an accepted message
}

// check validates one push request and returns it decrypted, or the status and reason to reject it.
func (s *PushService) check(r *http.Request, client *PushClient) (Push, int, error) {
	key, err := s.checkVAPID(r.Header.Get("Authorization"))
	if err != nil {
		return Push{}, http.StatusUnauthorized, fmt.Errorf("VAPID: %w", err)
	}
	// RFC 8030 §5.2: TTL is required. RFC 8291 §4: the body must be aes128gcm-encoded.
	if r.Header.Get("TTL") == "" {
		return Push{}, http.StatusBadRequest, errors.New("missing TTL header")
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "aes128gcm" {
		return Push{}, http.StatusBadRequest, fmt.Errorf("Content-Encoding %q, want aes128gcm", ce)
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		body, err = client.decrypt(body)
	}
	if err != nil {
		return Push{}, http.StatusBadRequest, fmt.Errorf("decrypt: %w", err)
	}
	h := r.Header.Get
	return Push{Payload: body, VAPIDKey: key, Urgency: h("Urgency"), TTL: h("TTL"), Topic: h("Topic")}, http.StatusCreated, nil
}

// checkVAPID verifies an RFC 8292 header "vapid t=<JWT>, k=<key>" and returns k.
func (s *PushService) checkVAPID(auth string) (string, error) {
	rest, ok := strings.CutPrefix(auth, "vapid ")
	if !ok {
		return "", fmt.Errorf("Authorization %q does not start with \"vapid \"", auth)
	}
	// The scheme's parameters are comma-separated name=value pairs (RFC 8292 §3).
	params := map[string]string{}
	for _, kv := range strings.Split(rest, ",") {
		if name, val, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
			params[name] = strings.Trim(val, `"`)
		}
	}
	token, k := params["t"], params["k"]
	// k is the server's P-256 public key as a base64url uncompressed point (RFC 8292 §3.2).
	raw, _ := pushB64.DecodeString(strings.TrimRight(k, "=")) // bad base64 leaves raw unparsable
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		return "", fmt.Errorf("k=%q is not a base64url P-256 point: %w", k, err)
	}
	// The JWT is header.claims.signature, each base64url without padding (RFC 7515).
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("t is not a three-part JWT")
	}
	var hdr struct{ Typ, Alg string }
	if err := decodePushJSON(parts[0], &hdr); err != nil || hdr.Typ != "JWT" || hdr.Alg != "ES256" {
		return "", fmt.Errorf("JWT header %+v (%v), want typ JWT alg ES256", hdr, err)
	}
	// ES256 signs SHA-256(header "." claims); the signature is r||s, 32 bytes each (RFC 7518 §3.4).
	sig, err := pushB64.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return "", fmt.Errorf("JWT signature is not 64 bytes of base64url")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, ss := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, ss) {
		return "", errors.New("JWT signature does not verify with k")
	}
	// Claims (RFC 8292 §2): aud is this service's origin, exp is in the future but
	// no more than 24 hours away, and sub (a contact) is present.
	var c struct {
		Aud, Sub string
		Exp      float64 // NumericDate: seconds since 1970; 0 if missing
	}
	if err := decodePushJSON(parts[1], &c); err != nil {
		return "", fmt.Errorf("JWT claims: %w", err)
	}
	ahead := time.Duration((c.Exp - float64(time.Now().Unix())) * float64(time.Second))
	switch {
	case c.Aud != s.URL:
		return "", fmt.Errorf("aud %q, want %q", c.Aud, s.URL)
	case ahead <= 0:
		return "", fmt.Errorf("exp %v missing or past", c.Exp)
	case ahead > 24*time.Hour:
		return "", fmt.Errorf("exp is %v ahead, more than 24h", ahead)
	case c.Sub == "":
		return "", errors.New("sub missing")
	}
	return k, nil
}

// decrypt undoes RFC 8291 message encryption of a single RFC 8188 aes128gcm record.
func (c *PushClient) decrypt(body []byte) ([]byte, error) {
	// RFC 8188 §2.1 header: salt(16) | rs(4, big-endian) | idlen(1) | keyid(idlen).
	// In Web Push the keyid is the sender's one-time P-256 public key (RFC 8291 §4).
	if len(body) < 21 || len(body) < 21+int(body[20]) {
		return nil, errors.New("body shorter than the aes128gcm header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	record := body[21+idlen:]
	if rs < 18 || uint64(len(record)) > uint64(rs) {
		return nil, fmt.Errorf("record of %d bytes with rs %d: want exactly one record", len(record), rs)
	}
	asPub, err := ecdh.P256().NewPublicKey(body[21 : 21+idlen])
	if err != nil {
		return nil, fmt.Errorf("keyid is not a P-256 public key: %w", err)
	}
	// RFC 8291 §3.3: ecdh_secret = ECDH(ua_private, as_public).
	secret, err := c.Priv.ECDH(asPub)
	if err != nil {
		return nil, err
	}
	// RFC 8291 §3.4: IKM = HKDF(salt=auth_secret, ikm=ecdh_secret,
	// info="WebPush: info" 0x00 ua_public as_public, 32 bytes).
	info := "WebPush: info\x00" + string(c.Priv.PublicKey().Bytes()) + string(asPub.Bytes())
	// (hkdf and AES-GCM setup cannot fail for these fixed lengths, so errors are ignored.)
	ikm, _ := hkdf.Key(sha256.New, secret, c.Auth, info, 32)
	// RFC 8188 §2.2-2.3: PRK = HKDF-Extract(salt, IKM); expand the 16-byte content key and
	// the 12-byte nonce from it. Record 0's nonce is that nonce XOR 0, i.e. itself.
	prk, _ := hkdf.Extract(sha256.New, ikm, salt)
	cek, _ := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, nonce, record, nil)
	if err != nil {
		return nil, fmt.Errorf("AES-GCM: %w (wrong keys or auth secret?)", err)
	}
	// RFC 8188 §2: plaintext = data | delimiter | zero padding; 0x02 marks the last record.
	plain = bytes.TrimRight(plain, "\x00")
	if len(plain) == 0 || plain[len(plain)-1] != 2 {
		return nil, errors.New("no 0x02 last-record padding delimiter")
	}
	return plain[:len(plain)-1], nil
}

// decodePushJSON decodes one base64url JWT part as JSON.
func decodePushJSON(part string, v any) error {
	raw, err := pushB64.DecodeString(part)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
