package domain

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PushCases is Web Push: browsers' subscriptions, a push for each wait
// that starts, and the one-tap actions a push carries. It holds the basic
// ports, the push store and sender, and the few things it reads of Turns
// and answers through (pushTurns); no Service.
type PushCases struct {
	basics
	fleet    *fleetInfo
	pushRead PushReader
	pushSend PushSender
	of       pushTurns
}

// pushTurns is what a push reads of a Turn and how its action answers:
// the Turns' use cases implement it.
type pushTurns interface {
	// Turn is the Turn's status as its caller sees it (offers made).
	Turn(ctx context.Context, id string) (TurnStatus, error)
	// Approve answers the Turn's permission prompt, fenced.
	Approve(ctx context.Context, turnID string, d ApprovalDecision) (ActionResult, error)
	// follows reports whether this daemon's monitor follows the Turn.
	follows(turnID string) bool
	// agentOf names the agent of a terminal and its project.
	agentOf(ctx context.Context, terminalID string) (agent, project string)
	// redactedExcerpt is text redacted, then bounded to n code points.
	redactedExcerpt(text string, n int) string
}

// UsePush wires Web Push in.
func (s *PushCases) UsePush(r PushReader, send PushSender) { s.pushRead, s.pushSend = r, send }

// PushKey is the public VAPID key a browser subscribes with, made the
// first time it is asked for.
func (s *PushCases) PushKey(ctx context.Context) (string, error) {
	if _, err := requirePrincipal(ctx); err != nil {
		return "", err
	}
	k, err := s.vapidKeys(ctx)
	return k.Public, err
}

func (s *PushCases) vapidKeys(ctx context.Context) (VAPIDKeys, error) {
	if s.pushSend == nil {
		return VAPIDKeys{}, E(CodeUnavailable, "Web Push is not configured")
	}
	read := func() (VAPIDKeys, bool, error) {
		v, err := s.store.Setting(ctx, settingVAPID)
		if err != nil || v == "" {
			return VAPIDKeys{}, false, err
		}
		pub, priv, _ := strings.Cut(v, " ")
		return VAPIDKeys{Public: pub, Private: priv}, true, nil
	}
	if k, ok, err := read(); ok || err != nil {
		return k, err
	}
	k, err := s.pushSend.NewKeys()
	if err != nil {
		return VAPIDKeys{}, err
	}
	// Once: another node may have made its keys meanwhile; its win.
	if err := s.store.InTx(ctx, func(tx Tx) error {
		pt, ok := tx.(PushTx)
		if !ok {
			return E(CodeUnavailable, "this store keeps no push subscriptions")
		}
		return pt.PutSettingOnce(ctx, settingVAPID, k.Public+" "+k.Private)
	}); err != nil {
		return VAPIDKeys{}, err
	}
	k, _, err = read()
	return k, err
}

// Subscribe keeps a browser's subscription for the caller (again: replaced).
func (s *PushCases) Subscribe(ctx context.Context, in NewPushSubscription, uiSession string) (PushSubscription, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return PushSubscription{}, err
	}
	var bad []FieldError
	if u, err := url.Parse(in.Endpoint); err != nil || len(in.Endpoint) > 2048 || u.Host == "" ||
		!(u.Scheme == "https" || (u.Scheme == "http" && IsLoopbackHost(u.Hostname()))) {
		bad = append(bad, FieldError{Field: "endpoint", Message: "an https URL of a push service (http only to this machine)"})
	}
	if b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(in.P256dh, "=")); err != nil || len(b) != 65 || b[0] != 4 {
		bad = append(bad, FieldError{Field: "keys.p256dh", Message: "the browser's P-256 public key, base64url (65 bytes)"})
	}
	if b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(in.Auth, "=")); err != nil || len(b) != 16 {
		bad = append(bad, FieldError{Field: "keys.auth", Message: "the browser's auth secret, base64url (16 bytes)"})
	}
	if len(bad) > 0 {
		return PushSubscription{}, Invalid("not a Web Push subscription", bad...)
	}
	if _, err := s.vapidKeys(ctx); err != nil {
		return PushSubscription{}, err
	}
	sub := PushSubscription{Endpoint: in.Endpoint, Principal: principalName(p), P256dh: strings.TrimRight(in.P256dh, "="),
		Auth: strings.TrimRight(in.Auth, "="), HideDetails: in.HideDetails, UISession: uiSession, CreatedAt: s.clock.Now().UTC()}
	err = s.store.InTx(ctx, func(tx Tx) error {
		pt, ok := tx.(PushTx)
		if !ok {
			return E(CodeUnavailable, "this store keeps no push subscriptions")
		}
		// An endpoint is one browser's: another principal's row for it goes.
		if _, err := pt.DeletePushSubscriptions(ctx, PushFilter{Endpoint: in.Endpoint}); err != nil {
			return err
		}
		return pt.PutPushSubscription(ctx, sub)
	})
	return sub, err
}

// PushSubscriptionsOf lists the caller's subscriptions.
func (s *PushCases) PushSubscriptionsOf(ctx context.Context) ([]PushSubscription, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return nil, err
	}
	if s.pushRead == nil {
		return nil, E(CodeUnavailable, "Web Push is not configured")
	}
	all, err := s.pushRead.PushSubscriptions(ctx)
	var mine []PushSubscription
	for _, x := range all {
		if x.Principal == principalName(p) {
			mine = append(mine, x)
		}
	}
	return mine, err
}

// Unsubscribe removes one of the caller's subscriptions.
func (s *PushCases) Unsubscribe(ctx context.Context, endpoint string) error {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return err
	}
	var n int64
	err = s.forgetPush(ctx, PushFilter{Endpoint: endpoint, Principal: principalName(p)}, &n)
	if err == nil && n == 0 {
		return E(CodeNotFound, "no push subscription of yours has that endpoint")
	}
	return err
}

// ForgetPushSession removes the subscriptions a dashboard session made
// (it signed out).
func (s *PushCases) ForgetPushSession(ctx context.Context, uiSession string) error {
	if uiSession == "" {
		return nil
	}
	return s.forgetPush(ctx, PushFilter{UISession: uiSession}, nil)
}

func (s *PushCases) forgetPush(ctx context.Context, f PushFilter, n *int64) error {
	return s.store.InTx(ctx, func(tx Tx) error {
		pt, ok := tx.(PushTx)
		if !ok {
			return nil
		}
		got, err := pt.DeletePushSubscriptions(ctx, f)
		if n != nil {
			*n = got
		}
		return err
	})
}

// RunPush sends a push for each new event that starts a wait, until ctx
// ends: it wakes on wake and at least every second. Events a daemon that
// was down did not push are sent if at most pushRetention old.
func (s *PushCases) RunPush(ctx context.Context, wake <-chan struct{}, log *slog.Logger) {
	tick := s.clock.NewTicker(time.Second, "push", "poll")
	defer tick.Stop()
	failing := false // said once while it lasts (a store outage fails every tick)
	for {
		err := s.pushNew(ctx, log)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			log.Warn("web push: new events cannot be read; trying every second", "err", err)
			failing = true
		case err == nil && failing:
			log.Info("web push: reading new events again")
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		}
	}
}

func (s *PushCases) pushNew(ctx context.Context, log *slog.Logger) error {
	if s.pushSend == nil || s.pushRead == nil {
		return nil
	}
	// Each node of a fleet reads every event with a cursor of its own: it
	// pushes the events of the Turns its monitor runs (with one cursor for
	// all, the first node to read an event moved past it for the others,
	// and a Turn another node runs was never pushed).
	cursor := settingPushCursor
	if s.fleet.self != "" {
		cursor += ":" + s.fleet.self
	}
	cur, err := s.store.Setting(ctx, cursor)
	if err != nil {
		return err
	}
	after, _ := strconv.ParseInt(cur, 10, 64)
	if cur == "" {
		// The first run pushes nothing that came before it.
		if after, err = s.store.LastEventID(ctx); err != nil {
			return err
		}
		return s.store.InTx(ctx, func(tx Tx) error { return tx.PutSetting(ctx, cursor, strconv.FormatInt(after, 10)) })
	}
	for {
		evs, err := s.store.EventsAfter(ctx, after, EventFilter{All: true}, 100)
		if err != nil || len(evs) == 0 {
			return err
		}
		for _, e := range evs {
			if what, ok := pushTypes[e.Type]; ok && s.clock.Now().Sub(e.CreatedAt) < pushRetention {
				s.pushEvent(ctx, e, what, log)
			}
			after = e.ID
			// Sent, then the cursor: a crash between sends it again (the
			// browser shows one notification per tag).
			if err := s.store.InTx(ctx, func(tx Tx) error { return tx.PutSetting(ctx, cursor, strconv.FormatInt(after, 10)) }); err != nil {
				return err
			}
		}
	}
}

// pushEvent sends one event's push to every subscription whose principal
// may see it; a subscription the push service says is gone is removed.
// Each principal's push is made once, as that principal, in a
// conversation of its own (the status read there offers the prompt its
// one-tap actions answer).
func (s *PushCases) pushEvent(ctx context.Context, e Event, what string, log *slog.Logger) {
	subs, err := s.pushRead.PushSubscriptions(ctx)
	if err != nil || len(subs) == 0 {
		return
	}
	keys, err := s.vapidKeys(ctx)
	if err != nil {
		return
	}
	byPrincipal := map[string][]PushSubscription{}
	var order []string
	for _, sub := range subs {
		if sub.Principal != principalOperator && sub.Principal != e.HostID {
			continue
		}
		if _, ok := byPrincipal[sub.Principal]; !ok {
			order = append(order, sub.Principal)
		}
		byPrincipal[sub.Principal] = append(byPrincipal[sub.Principal], sub)
	}
	if s.fleet.nodes != nil && !s.of.follows(e.Subject) {
		// In a fleet the node whose monitor runs the Turn pushes: it alone
		// sees the pane (the command, the buttons).
		return
	}
	for _, name := range order {
		p := Principal{Operator: name == principalOperator, Conversation: "push:" + strconv.FormatInt(e.ID, 10)}
		if !p.Operator {
			p.HostID = name
		}
		full, hidden := s.pushPayloads(WithPrincipal(ctx, p), e, what, name)
		for _, sub := range byPrincipal[name] {
			pl := full
			if sub.HideDetails {
				pl = hidden
			}
			body, err := json.Marshal(pl)
			if err != nil {
				continue
			}
			// The sender bounds each push (its HTTP client's timeout).
			status, err := s.pushSend.Send(ctx, sub, body, keys)
			switch {
			case status == 404 || status == 410:
				// The browser dropped it: so does AKK.
				_ = s.forgetPush(ctx, PushFilter{Endpoint: sub.Endpoint, Principal: sub.Principal}, nil)
				log.Info("web push subscription gone; removed", "principal", sub.Principal, "status", status)
			case err != nil || status/100 != 2:
				log.Warn("web push not taken", "principal", sub.Principal, "status", status, "err", err)
			}
		}
	}
}

// pushPayloads say which agent waits and on what: full, with the command
// or the question (redacted, as the status shows it) and, for a permission
// prompt AKK can answer, its one-tap actions; hidden, the agent and the
// project only, and no actions (nobody approves what the lock screen did
// not show).
func (s *PushCases) pushPayloads(ctx context.Context, e Event, what, principal string) (full, hidden PushPayload) {
	turnID := e.Subject
	base := PushPayload{Type: e.Type, Tag: turnID + ":" + e.Type, URL: "/#/needs/" + turnID, TurnID: turnID, Title: "An agent " + what}
	var agent, project string
	if t, err := s.store.Turn(ctx, turnID); err == nil {
		agent, project = s.of.agentOf(ctx, t.TerminalID)
	}
	if agent != "" {
		base.Title = agent + " " + what
	}
	base.Body = project
	full, hidden = base, base
	st, err := s.of.Turn(ctx, turnID)
	if err != nil {
		return full, hidden
	}
	detail := ""
	switch {
	case st.Approval != nil && st.Approval.CommandExcerpt != "":
		detail = st.Approval.CommandExcerpt
	case st.Interaction != nil && len(st.Interaction.Questions) > 0:
		detail = st.Interaction.Questions[0].Prompt
	case st.Turn.FailureReason != "":
		detail = st.Turn.FailureReason
	}
	if detail != "" {
		full.Body = strings.TrimSpace(project + "\n" + s.of.redactedExcerpt(detail, 200))
	}
	if e.Type == "turn.approval_required" && st.Approval != nil && !st.Approval.ManualRequired {
		full.Actions = s.issueActions(ctx, principal, turnID, st.Approval)
	}
	return full, hidden
}

// issueActions makes one single-use token per offered decision, valid
// while the offer the status read made (and at most ActionTTL).
func (s *PushCases) issueActions(ctx context.Context, principal, turnID string, ap *ApprovalView) []PushAction {
	p, _ := PrincipalFrom(ctx)
	now := s.clock.Now().UTC()
	expires := now.Add(ActionTTL)
	if !ap.ExpiresAt.IsZero() && ap.ExpiresAt.Before(expires) {
		expires = ap.ExpiresAt
	}
	var out []PushAction
	var rows []ActionToken
	for _, a := range actionTitles {
		if !slices.Contains(ap.Decisions, a.d) {
			continue
		}
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil
		}
		tok := base64.RawURLEncoding.EncodeToString(b)
		out = append(out, PushAction{Action: string(a.d), Title: a.title, Token: tok})
		rows = append(rows, ActionToken{Hash: hashActionToken(tok), Principal: principal, Conversation: p.Conversation, TurnID: turnID,
			Decision: a.d, ExpiresAt: expires, CreatedAt: now})
	}
	err := s.store.InTx(ctx, func(tx Tx) error {
		pt, ok := tx.(PushTx)
		if !ok {
			return E(CodeUnavailable, "this store keeps no action tokens")
		}
		for _, r := range rows {
			if err := pt.InsertActionToken(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil
	}
	return out
}

// UseAction answers a prompt with a one-tap action's token, which is all
// the credential it needs: once, as the principal the push went to, in the
// conversation whose offer showed the prompt. The answer is fenced like
// any approval: the prompt must still be the one offered, or nothing is
// typed (409). A token used before, or expired, is gone (410); one that
// never was, 404. The token is never logged.
func (s *PushCases) UseAction(ctx context.Context, token string) (ActionResult, error) {
	if len(token) < 32 || len(token) > 128 {
		return ActionResult{}, E(CodeNotFound, "no such action")
	}
	var a ActionToken
	err := s.store.InTx(ctx, func(tx Tx) error {
		pt, ok := tx.(PushTx)
		if !ok {
			return E(CodeUnavailable, "this store keeps no action tokens")
		}
		var err error
		a, err = pt.UseActionToken(ctx, hashActionToken(token), s.clock.Now().UTC())
		return err
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return ActionResult{}, E(CodeNotFound, "no such action")
	case errors.Is(err, ErrActionGone):
		return ActionResult{}, E(CodeActionGone, "this action was used or has expired: open the queue")
	case err != nil:
		return ActionResult{}, err
	}
	p := Principal{Operator: a.Principal == principalOperator, Conversation: a.Conversation}
	if !p.Operator {
		if _, err := s.store.Host(ctx, a.Principal); err != nil {
			return ActionResult{}, E(CodeActionGone, "the host this action was for is gone")
		}
		p.HostID = a.Principal
	}
	return s.of.Approve(WithPrincipal(ctx, p), a.TurnID, a.Decision)
}
