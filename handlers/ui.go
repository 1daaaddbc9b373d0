package handlers

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"akk/domain"
)

// The dashboard's sessions. A session maps an HttpOnly cookie to the token
// it signed in with; the token stays in this process's memory only and is
// authenticated again on every request (a rotated or deleted host token
// ends its sessions at once). A daemon restart signs everyone out.

const (
	sessionCookie = "akk_session"
	sessionTTL    = 12 * time.Hour
	// maxSessionsPerPrincipal bounds the sessions of one principal (the
	// operator, or one host): its own oldest goes when it signs in once
	// more, so no principal's sign-ins can end another's sessions.
	maxSessionsPerPrincipal = 32
)

type uiSession struct {
	token, conversation string
	principal           string // "operator" or the host's id
	expires             time.Time
}

type uiSessions struct {
	mu sync.Mutex
	m  map[string]uiSession
}

func (u *uiSessions) add(token, principal string, now time.Time) (string, uiSession) {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	id := base64.RawURLEncoding.EncodeToString(b)
	// The conversation name goes into events and webhooks: it is derived
	// from a hash of the cookie, so it gives none of the cookie away.
	sum := sha256.Sum256([]byte(id))
	s := uiSession{token: token, conversation: "ui-" + hex.EncodeToString(sum[:8]), principal: principal, expires: now.Add(sessionTTL)}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]uiSession{}
	}
	for k, v := range u.m {
		if now.After(v.expires) {
			delete(u.m, k)
		}
	}
	// The principal's own sessions only: at its cap, the one it signed in
	// longest ago (the soonest to expire) goes.
	n, oldest := 0, ""
	for k, v := range u.m {
		if v.principal != principal {
			continue
		}
		n++
		if oldest == "" || v.expires.Before(u.m[oldest].expires) {
			oldest = k
		}
	}
	if n >= maxSessionsPerPrincipal {
		delete(u.m, oldest)
	}
	u.m[id] = s
	return id, s
}

func (u *uiSessions) get(id string, now time.Time) (uiSession, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s, ok := u.m[id]
	if ok && now.After(s.expires) {
		delete(u.m, id)
		return uiSession{}, false
	}
	return s, ok
}

func (u *uiSessions) drop(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.m, id)
}

type sessionKey struct{}

// requestKey holds the *http.Request in a strict handler's context (the
// session routes read its headers and TLS state).
type requestKey struct{}

// sameOrigin is the dashboard's CSRF proof: the browser says the request
// comes from this origin (Sec-Fetch-Site), or its Origin is this daemon.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return strings.EqualFold(origin, scheme+r.Host)
}

// mayType reports whether r is a read that may press keys in a pane: the
// models and permissions reads open the agent's own menu and close it
// again. From a cookie it needs the same-origin proof a mutation needs.
// Both the decoded and the escaped path are looked at, so no spelling of
// the path reaches those routes unchecked.
func mayType(r *http.Request) bool {
	for _, p := range []string{r.URL.Path, r.URL.EscapedPath()} {
		if strings.HasPrefix(p, "/v1/terminals/") && (strings.HasSuffix(p, "/models") || strings.HasSuffix(p, "/permissions")) {
			return true
		}
	}
	return false
}

// cookieAuth authenticates a request that carries the session cookie and
// no Authorization header; ok is false when it carries none.
func (s *Server) cookieAuth(w http.ResponseWriter, r *http.Request) (*http.Request, bool, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return r, false, nil
	}
	if !s.hosts.originAllowed(r) {
		return r, true, errOrigin()
	}
	sess, found := s.sessions.get(c.Value, time.Now())
	if !found {
		return r, true, domain.E(domain.CodeUnauthorized, "the dashboard session ended; sign in again")
	}
	if (r.Method != http.MethodGet && r.Method != http.MethodHead || mayType(r)) && !sameOrigin(r) {
		return r, true, domain.E(domain.CodeCSRFRejected, "a dashboard request must come from the dashboard's own page")
	}
	p, err := s.Service.Authenticate(r.Context(), sess.token)
	if err != nil {
		s.sessions.drop(c.Value)
		return r, true, err
	}
	p.Conversation = sess.conversation
	ctx := context.WithValue(domain.WithPrincipal(r.Context(), p), sessionKey{}, c.Value)
	return r.WithContext(ctx), true, nil
}

func (s *Server) sessionOut(ctx context.Context, p domain.Principal, sess uiSession) (UISession, error) {
	out := UISession{Role: UISessionRoleOperator, Conversation: sess.conversation, ExpiresAt: sess.expires.UTC()}
	if !p.Operator {
		out.Role = UISessionRoleHost
		out.HostId = optString(p.HostID)
		out.HostName = optString(s.Service.HostName(ctx, p.HostID))
	}
	return out, nil
}

func cookieFor(r *http.Request, value string, maxAge int) string {
	c := &http.Cookie{Name: sessionCookie, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r != nil && r.TLS != nil, MaxAge: maxAge}
	return c.String()
}

// CreateUISession signs the dashboard in.
func (s *Server) CreateUISession(ctx context.Context, req CreateUISessionRequestObject) (CreateUISessionResponseObject, error) {
	r, _ := ctx.Value(requestKey{}).(*http.Request)
	if r != nil && !s.hosts.originAllowed(r) {
		return nil, errOrigin()
	}
	if r == nil || !sameOrigin(r) {
		return nil, domain.E(domain.CodeCSRFRejected, "sign in from the dashboard's own page")
	}
	token := strings.TrimSpace(req.Body.Token)
	p, err := s.Service.Authenticate(ctx, token)
	if err != nil {
		return nil, err
	}
	id, sess := s.sessions.add(token, principalKey(p), time.Now())
	out, err := s.sessionOut(ctx, p, sess)
	if err != nil {
		return nil, err
	}
	cookie := cookieFor(r, id, int(sessionTTL/time.Second))
	return CreateUISession201JSONResponse{Body: out, Headers: CreateUISession201ResponseHeaders{SetCookie: &cookie}}, nil
}

// GetUISession shows the cookie's session.
func (s *Server) GetUISession(ctx context.Context, _ GetUISessionRequestObject) (GetUISessionResponseObject, error) {
	id, _ := ctx.Value(sessionKey{}).(string)
	sess, ok := s.sessions.get(id, time.Now())
	if !ok {
		return nil, domain.E(domain.CodeUnauthorized, "not signed in to the dashboard")
	}
	p, _ := domain.PrincipalFrom(ctx)
	out, err := s.sessionOut(ctx, p, sess)
	if err != nil {
		return nil, err
	}
	return GetUISession200JSONResponse(out), nil
}

// DeleteUISession signs the dashboard out.
func (s *Server) DeleteUISession(ctx context.Context, _ DeleteUISessionRequestObject) (DeleteUISessionResponseObject, error) {
	id, _ := ctx.Value(sessionKey{}).(string)
	if id == "" {
		return nil, domain.E(domain.CodeUnauthorized, "not signed in to the dashboard")
	}
	s.sessions.drop(id)
	// The browser's push subscriptions made in it go too.
	if err := s.Service.ForgetPushSession(ctx, uiSessionRef(ctx)); err != nil {
		return nil, err
	}
	// Its event streams end with it.
	s.streams.end(func(o *openStream) bool { return o.ui == id })
	r, _ := ctx.Value(requestKey{}).(*http.Request)
	cookie := cookieFor(r, "", -1)
	return DeleteUISession204Response{Headers: DeleteUISession204ResponseHeaders{SetCookie: &cookie}}, nil
}
