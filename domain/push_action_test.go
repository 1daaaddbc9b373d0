package domain_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"akk/domain"
)

// TestActionTokenExpires: a one-tap action's token is refused as gone
// (410 action_gone) once it expired, and nothing is answered; the clock
// is moved, not waited for.
func TestActionTokenExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, "", &fakeTerm{term: idleTerminal()})
		ctx := context.Background()
		tok := strings.Repeat("k", 43)
		now := w.now().UTC()
		a := domain.ActionToken{Hash: domain.ActionTokenHash(tok), Principal: "operator", Conversation: "push:1", TurnID: "turn_none",
			Decision: domain.ApproveOnce, ExpiresAt: now.Add(time.Minute), CreatedAt: now}
		if err := w.store.InTx(ctx, func(tx domain.Tx) error { return tx.(domain.PushTx).InsertActionToken(ctx, a) }); err != nil {
			t.Fatal(err)
		}
		w.Advance(2 * time.Minute)
		_, err := w.svc.UseAction(ctx, tok)
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != domain.CodeActionGone {
			t.Fatalf("an expired token: %v", err)
		}
		if _, err := w.svc.UseAction(ctx, strings.Repeat("z", 43)); !errors.As(err, &de) || de.Code != domain.CodeNotFound {
			t.Fatalf("a token that never was: %v", err)
		}
	})
}
