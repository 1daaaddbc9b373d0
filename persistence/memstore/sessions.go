package memstore

import (
	"context"
	"slices"

	"akk/domain"
)

func (t *tx) InsertSession(ctx context.Context, s domain.Session) error {
	if err := insertable(t.st, "insert session", t.st.sessions, s.ID, s.HostID); err != nil {
		return err
	}
	s.CreatedAt = utc(s.CreatedAt)
	t.st.sessions[s.ID] = s
	return nil
}

func (st *state) session(id string) (domain.Session, error) {
	s, ok := st.sessions[id]
	if !ok {
		return domain.Session{}, domain.ErrNotFound
	}
	return s, nil
}

func (t *tx) Session(ctx context.Context, id string) (domain.Session, error) { return t.st.session(id) }

// Session returns one session.
func (s *Store) Session(ctx context.Context, id string) (domain.Session, error) {
	return s.committed().session(id)
}

// BindSession records the native thread of a session still at revision rev.
func (t *tx) BindSession(ctx context.Context, id string, rev int64, threadID string) error {
	s, err := atRevision(t.st.sessions, id, rev, func(s domain.Session) int64 { return s.Revision })
	if err != nil {
		return err
	}
	s.NativeThreadID = threadID
	s.Revision++
	t.st.sessions[id] = s
	return nil
}

// AddTurnChanges appends a Turn's changes after those stored, keeping at
// most domain.MaxTurnChanges.
func (t *tx) AddTurnChanges(ctx context.Context, turnID string, changes []domain.TurnChange) error {
	// A new slice: the committed state's stays as it is.
	cs := slices.Clone(t.st.changes[turnID])
	for _, c := range changes {
		if len(cs) >= domain.MaxTurnChanges {
			break
		}
		c.Seq, c.At = len(cs)+1, utc(c.At)
		cs = append(cs, c)
	}
	if len(cs) > 0 {
		t.st.changes[turnID] = cs
	}
	return nil
}

// TurnChanges lists a Turn's stored changes in order.
func (s *Store) TurnChanges(ctx context.Context, turnID string) ([]domain.TurnChange, error) {
	return append([]domain.TurnChange{}, s.committed().changes[turnID]...), nil
}
