package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"akk/domain"
)

// stored is a Turn as the SQL store keeps it: the endpoint named (from the
// public id when it names none), times in UTC, limits in milliseconds.
func stored(x domain.Turn) domain.Turn {
	x.Endpoint = endpointOf(x.Endpoint, x.TerminalID)
	x.DeliveryPath = x.DeliveryPath.OrManaged()
	x.InactivityLimit, x.HardTimeout = x.InactivityLimit.Truncate(time.Millisecond), x.HardTimeout.Truncate(time.Millisecond)
	x.Actions, x.NewChanges = actionsOf(x.Actions), nil
	x.CreatedAt, x.UpdatedAt, x.AcceptedAt = utc(x.CreatedAt), utc(x.UpdatedAt), utc(x.AcceptedAt)
	x.LastActivityAt, x.EndedAt, x.LatestItemAt = utc(x.LastActivityAt), utc(x.EndedAt), utc(x.LatestItemAt)
	return x
}

func actionsOf(as []domain.ProgressAction) []domain.ProgressAction {
	if len(as) == 0 {
		return nil
	}
	return slices.Clone(as)
}

// endpointOf is the endpoint a record is stored under: its own, or, when
// it names none, the one its public id names; a pane unless it says.
func endpointOf(e domain.EndpointRef, publicID string) domain.EndpointRef {
	if e.ID == "" {
		e = domain.ParseEndpoint(publicID)
	}
	return withKind(e)
}

// withKind is e, a pane unless it names another kind.
func withKind(e domain.EndpointRef) domain.EndpointRef {
	if e.Kind == "" {
		e.Kind = domain.EndpointPane
	}
	return e
}

func (st *state) turn(id string) (domain.Turn, error) {
	x, ok := st.turns[id]
	if !ok {
		return domain.Turn{}, domain.ErrNotFound
	}
	x.Actions = actionsOf(x.Actions)
	return x, nil
}

// holderOf returns the Turn other than id that holds ep.
func (st *state) holderOf(ep domain.EndpointRef, id string) (domain.Turn, bool) {
	var h domain.Turn
	found := false
	for _, x := range st.turns {
		if x.ID != id && x.Endpoint == ep && x.State.HoldsTerminal() && (!found || x.CreatedAt.After(h.CreatedAt)) {
			h, found = x, true
		}
	}
	return h, found
}

// errHeld is the conflict of a second Turn holding one endpoint.
var errHeld = &domain.Error{Code: domain.CodeConflictActiveTurn, Message: "another Turn holds this terminal", Err: errExists}

func (t *tx) InsertTurn(ctx context.Context, x domain.Turn) error {
	x = stored(x)
	if err := insertable(t.st, "insert turn", t.st.turns, x.ID, x.HostID); err != nil {
		return err
	}
	if _, ok := t.st.sessions[x.SessionID]; !ok {
		return fmt.Errorf("insert turn: session %s: %w", x.SessionID, errMissing)
	}
	if _, err := t.st.byMessageID(x.HostID, x.MessageID); err == nil {
		return fmt.Errorf("insert turn: message id: %w", errExists)
	}
	if _, held := t.st.holderOf(x.Endpoint, x.ID); held && x.State.HoldsTerminal() {
		return errHeld
	}
	t.st.turns[x.ID] = x
	return nil
}

// UpdateTurn writes what a Turn's progress changes, if the stored row is
// still at revision x.Revision, and bumps the revision.
func (t *tx) UpdateTurn(ctx context.Context, x domain.Turn) error {
	cur, err := atRevision(t.st.turns, x.ID, x.Revision, func(x domain.Turn) int64 { return x.Revision })
	if err != nil {
		return err
	}
	if _, held := t.st.holderOf(cur.Endpoint, x.ID); held && x.State.HoldsTerminal() {
		return errHeld
	}
	x = stored(x)
	cur.Request, cur.State, cur.SubmitStage, cur.Mark = x.Request, x.State, x.SubmitStage, x.Mark
	cur.NativeThreadID, cur.NativeTurnID, cur.LatestText = x.NativeThreadID, x.NativeTurnID, x.LatestText
	cur.FinalMessage, cur.FailureReason, cur.CancelRequested = x.FinalMessage, x.FailureReason, x.CancelRequested
	cur.UpdatedAt, cur.AcceptedAt, cur.LastActivityAt, cur.EndedAt = x.UpdatedAt, x.AcceptedAt, x.LastActivityAt, x.EndedAt
	cur.Actions, cur.LatestItemAt = x.Actions, x.LatestItemAt
	cur.Revision++
	t.st.turns[x.ID] = cur
	return nil
}

// DeleteTurn removes a Turn and its changes.
func (t *tx) DeleteTurn(ctx context.Context, id string) error {
	delete(t.st.changes, id)
	delete(t.st.turns, id)
	return nil
}

func (t *tx) Turn(ctx context.Context, id string) (domain.Turn, error) { return t.st.turn(id) }

// Turn returns one Turn.
func (s *Store) Turn(ctx context.Context, id string) (domain.Turn, error) {
	return s.committed().turn(id)
}

func (st *state) byMessageID(hostID, messageID string) (domain.Turn, error) {
	for _, x := range st.turns {
		if messageID != "" && x.HostID == hostID && x.MessageID == messageID {
			return st.turn(x.ID)
		}
	}
	return domain.Turn{}, domain.ErrNotFound
}

// TurnByMessageID finds an owner's Turn by idempotency key.
func (s *Store) TurnByMessageID(ctx context.Context, hostID, messageID string) (domain.Turn, error) {
	return s.committed().byMessageID(hostID, messageID)
}

// HoldingTurn returns the Turn that holds the endpoint, if any.
func (s *Store) HoldingTurn(ctx context.Context, ep domain.EndpointRef) (domain.Turn, error) {
	st := s.committed()
	if h, ok := st.holderOf(withKind(ep), ""); ok {
		return st.turn(h.ID)
	}
	return domain.Turn{}, domain.ErrNotFound
}

// newestFirst orders Turns by creation, the newest first.
func newestFirst(a, b domain.Turn) int {
	return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
}

// Turns lists Turns, newest first (every Turn is this store's own).
func (s *Store) Turns(ctx context.Context, f domain.TurnFilter) ([]domain.Turn, error) {
	out := []domain.Turn{}
	for _, x := range s.committed().turns {
		if (f.All || x.HostID == f.HostID) && (f.State == "" || x.State == f.State) &&
			(!f.Holding || x.State.HoldsTerminal()) && (f.Terminal == "" || x.TerminalID == f.Terminal) {
			x.Actions = actionsOf(x.Actions)
			out = append(out, x)
		}
	}
	slices.SortFunc(out, newestFirst)
	if f.Limit <= 0 {
		f.Limit = 100
	}
	return out[:min(len(out), f.Limit)], nil
}

// RecentTurnsOf returns the newest per Turns of each endpoint of eps.
func (s *Store) RecentTurnsOf(ctx context.Context, eps []domain.EndpointRef, per int) (map[domain.EndpointRef][]domain.Turn, error) {
	out := map[domain.EndpointRef][]domain.Turn{}
	if per <= 0 {
		return out, nil
	}
	want := map[domain.EndpointRef]bool{}
	for _, ep := range eps {
		want[withKind(ep)] = true
	}
	for _, x := range s.committed().turns {
		if want[x.Endpoint] {
			x.Actions = actionsOf(x.Actions)
			out[x.Endpoint] = append(out[x.Endpoint], x)
		}
	}
	for ep, ts := range out {
		slices.SortFunc(ts, newestFirst)
		out[ep] = ts[:min(len(ts), per)]
	}
	return out, nil
}
