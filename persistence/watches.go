package persistence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"akk/domain"
)

const watchCols = `watch_id, COALESCE(host_id, ''), conversation, terminal_id, mode, state, mark, native_turn_id,
	final_message, latest_text, reason, seen_activity, idle_since, approval_shown, hard_timeout_ms, created_at,
	updated_at, ended_at, revision, turn_id, endpoint_kind, endpoint_id`

func scanWatch(row interface{ Scan(...any) error }) (domain.Watch, error) {
	var w domain.Watch
	var state, mark, epKind string
	var seen, shown int
	var hard int64
	var idle, created, updated, ended sql.NullString
	err := row.Scan(&w.ID, &w.HostID, &w.Conversation, &w.TerminalID, &w.Mode, &state, &mark, &w.NativeTurnID,
		&w.FinalMessage, &w.LatestText, &w.Reason, &seen, &idle, &shown, &hard, &created, &updated, &ended, &w.Revision, &w.TurnID,
		&epKind, &w.Endpoint.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return w, domain.ErrNotFound
	}
	if err != nil {
		return w, err
	}
	w.Endpoint.Kind = domain.EndpointKind(epKind)
	w.State, w.Mark = domain.WatchState(state), domain.DurableMark(mark)
	w.SeenActivity, w.ApprovalShown = seen != 0, shown != 0
	w.HardTimeout = time.Duration(hard) * time.Millisecond
	w.IdleSince, w.CreatedAt, w.UpdatedAt, w.EndedAt = parseTS(idle), parseTS(created), parseTS(updated), parseTS(ended)
	return w, nil
}

func (t *tx) InsertWatch(ctx context.Context, w domain.Watch) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO watches(watch_id, host_id, conversation, terminal_id, mode, state, mark,
		native_turn_id, final_message, latest_text, reason, seen_activity, idle_since, approval_shown, hard_timeout_ms,
		created_at, updated_at, ended_at, revision, turn_id, endpoint_kind, endpoint_id, node)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, nullable(w.HostID), w.Conversation, w.TerminalID, w.Mode, string(w.State), string(w.Mark), w.NativeTurnID,
		w.FinalMessage, w.LatestText, w.Reason, boolInt(w.SeenActivity), nullTS(w.IdleSince), boolInt(w.ApprovalShown),
		w.HardTimeout.Milliseconds(), ts(w.CreatedAt), ts(w.UpdatedAt), nullTS(w.EndedAt), w.Revision, w.TurnID,
		string(endpointKind(storedEndpoint(w.Endpoint, w.TerminalID))), storedEndpoint(w.Endpoint, w.TerminalID).ID, t.node)
	if err != nil {
		return fmt.Errorf("insert watch: %w", err)
	}
	return nil
}

func (t *tx) UpdateWatch(ctx context.Context, w domain.Watch) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE watches SET state = ?, mark = ?, native_turn_id = ?, final_message = ?,
		latest_text = ?, reason = ?, seen_activity = ?, idle_since = ?, approval_shown = ?, created_at = ?, updated_at = ?,
		ended_at = ?, revision = revision + 1 WHERE watch_id = ? AND revision = ?`,
		string(w.State), string(w.Mark), w.NativeTurnID, w.FinalMessage, w.LatestText, w.Reason, boolInt(w.SeenActivity),
		nullTS(w.IdleSince), boolInt(w.ApprovalShown), ts(w.CreatedAt), ts(w.UpdatedAt), nullTS(w.EndedAt), w.ID, w.Revision)
	if err != nil {
		return fmt.Errorf("update watch: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return domain.ErrRevisionConflict
	}
	return nil
}

// Watch returns one Watch.
func (s *Store) Watch(ctx context.Context, id string) (domain.Watch, error) {
	return scanWatch(s.r.QueryRowContext(ctx, `SELECT `+watchCols+` FROM watches WHERE watch_id = ?`, id))
}

// WatchOfTurn returns the Watch of a Send's Turn.
func (t *tx) WatchOfTurn(ctx context.Context, turnID string) (domain.Watch, error) {
	return scanWatch(t.tx.QueryRowContext(ctx, `SELECT `+watchCols+` FROM watches WHERE turn_id = ? AND turn_id <> ''
		ORDER BY created_at DESC LIMIT 1`, turnID))
}

// WatchOfTurn returns the Watch of a Send's Turn.
func (s *Store) WatchOfTurn(ctx context.Context, turnID string) (domain.Watch, error) {
	return scanWatch(s.r.QueryRowContext(ctx, `SELECT `+watchCols+` FROM watches WHERE turn_id = ? AND turn_id <> ''
		ORDER BY created_at DESC LIMIT 1`, turnID))
}

// ActiveWatches returns every active Watch.
func (s *Store) ActiveWatches(ctx context.Context) ([]domain.Watch, error) {
	return s.activeWatches(ctx, `SELECT `+watchCols+` FROM watches WHERE state = 'active'`)
}

// OwnedActiveWatches returns the active Watches of this daemon's node.
func (s *Store) OwnedActiveWatches(ctx context.Context) ([]domain.Watch, error) {
	return s.activeWatches(ctx, `SELECT `+watchCols+` FROM watches WHERE state = 'active' AND node = ?`, s.node)
}

func (s *Store) activeWatches(ctx context.Context, q string, args ...any) ([]domain.Watch, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("active watches: %w", err)
	}
	defer rows.Close()
	var out []domain.Watch
	for rows.Next() {
		w, err := scanWatch(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}
