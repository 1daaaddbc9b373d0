package persistence

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"akk/domain"
)

const turnCols = `turn_id, COALESCE(host_id, ''), conversation, session_id, terminal_id, COALESCE(message_id, ''), original_request, request,
	state, submit_stage, mark, native_thread_id, native_turn_id, latest_text, final_message, failure_reason,
	cancel_requested, inactivity_ms, hard_timeout_ms, created_at, updated_at, accepted_at, last_activity_at, ended_at, revision, delivery_path, progress_actions, latest_item_at,
	endpoint_kind, endpoint_id`

func scanTurn(row interface{ Scan(...any) error }) (domain.Turn, error) {
	var t domain.Turn
	var state, stage, mark, path string
	var cancel int
	var inact, hard int64
	var created, updated, accepted, activity, ended, itemAt sql.NullString
	var actions, epKind string
	err := row.Scan(&t.ID, &t.HostID, &t.Conversation, &t.SessionID, &t.TerminalID, &t.MessageID, &t.OriginalRequest, &t.Request,
		&state, &stage, &mark, &t.NativeThreadID, &t.NativeTurnID, &t.LatestText, &t.FinalMessage, &t.FailureReason,
		&cancel, &inact, &hard, &created, &updated, &accepted, &activity, &ended, &t.Revision, &path, &actions, &itemAt,
		&epKind, &t.Endpoint.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return t, domain.ErrNotFound
	}
	if err != nil {
		return t, err
	}
	t.Endpoint.Kind = domain.EndpointKind(epKind)
	t.State, t.SubmitStage, t.Mark = domain.TurnState(state), domain.SubmitStage(stage), domain.DurableMark(mark)
	t.CancelRequested = cancel != 0
	t.DeliveryPath = domain.DeliveryPath(path)
	if actions != "" {
		_ = json.Unmarshal([]byte(actions), &t.Actions)
	}
	t.LatestItemAt = parseTS(itemAt)
	t.InactivityLimit, t.HardTimeout = time.Duration(inact)*time.Millisecond, time.Duration(hard)*time.Millisecond
	t.CreatedAt, t.UpdatedAt, t.AcceptedAt = parseTS(created), parseTS(updated), parseTS(accepted)
	t.LastActivityAt, t.EndedAt = parseTS(activity), parseTS(ended)
	return t, nil
}

func actionsJSON(as []domain.ProgressAction) string {
	if len(as) == 0 {
		return ""
	}
	b, _ := json.Marshal(as)
	return string(b)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (t *tx) InsertTurn(ctx context.Context, x domain.Turn) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO turns(turn_id, host_id, conversation, session_id, terminal_id, message_id,
		original_request, request, state, submit_stage, mark, native_thread_id, native_turn_id, latest_text, final_message, failure_reason,
		cancel_requested, inactivity_ms, hard_timeout_ms, created_at, updated_at, accepted_at, last_activity_at, ended_at, revision,
		delivery_path, progress_actions, latest_item_at, endpoint_kind, endpoint_id, node)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		x.ID, nullable(x.HostID), x.Conversation, x.SessionID, x.TerminalID, nullable(x.MessageID), x.OriginalRequest, x.Request,
		string(x.State), string(x.SubmitStage), string(x.Mark), x.NativeThreadID, x.NativeTurnID, x.LatestText,
		x.FinalMessage, x.FailureReason, boolInt(x.CancelRequested), x.InactivityLimit.Milliseconds(), x.HardTimeout.Milliseconds(),
		ts(x.CreatedAt), ts(x.UpdatedAt), nullTS(x.AcceptedAt), nullTS(x.LastActivityAt), nullTS(x.EndedAt), x.Revision, x.DeliveryPath.OrManaged(), actionsJSON(x.Actions), nullTS(x.LatestItemAt),
		string(endpointKind(storedEndpoint(x.Endpoint, x.TerminalID))), storedEndpoint(x.Endpoint, x.TerminalID).ID, t.node)
	if err != nil {
		return t.holderConflict(fmt.Errorf("insert turn: %w", err))
	}
	return nil
}

// holderConflict turns a violation of turns_one_holder (another Turn
// already holds the terminal) into the domain's conflict.
func (t *tx) holderConflict(err error) error {
	if t.d.uniqueViolation(err, "turns", "turns_one_holder", "endpoint_kind") {
		return &domain.Error{Code: domain.CodeConflictActiveTurn, Message: "another Turn holds this terminal", Err: err}
	}
	return err
}

func (t *tx) UpdateTurn(ctx context.Context, x domain.Turn) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE turns SET request = ?, state = ?, submit_stage = ?, mark = ?,
		native_thread_id = ?, native_turn_id = ?, latest_text = ?, final_message = ?, failure_reason = ?,
		cancel_requested = ?, updated_at = ?, accepted_at = ?, last_activity_at = ?, ended_at = ?, progress_actions = ?,
		latest_item_at = ?, revision = revision + 1 WHERE turn_id = ? AND revision = ?`,
		x.Request, string(x.State), string(x.SubmitStage), string(x.Mark), x.NativeThreadID, x.NativeTurnID, x.LatestText,
		x.FinalMessage, x.FailureReason, boolInt(x.CancelRequested), ts(x.UpdatedAt), nullTS(x.AcceptedAt),
		nullTS(x.LastActivityAt), nullTS(x.EndedAt), actionsJSON(x.Actions), nullTS(x.LatestItemAt), x.ID, x.Revision)
	if err != nil {
		return t.holderConflict(fmt.Errorf("update turn: %w", err))
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return domain.ErrRevisionConflict
	}
	return nil
}

func (t *tx) DeleteTurn(ctx context.Context, id string) error {
	if err := t.deleteTurnChanges(ctx, id); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `DELETE FROM turns WHERE turn_id = ?`, id)
	return err
}

func (t *tx) Turn(ctx context.Context, id string) (domain.Turn, error) {
	return scanTurn(t.tx.QueryRowContext(ctx, `SELECT `+turnCols+` FROM turns WHERE turn_id = ?`, id))
}

// TurnByMessageID finds an owner's Turn by idempotency key.
func (s *Store) TurnByMessageID(ctx context.Context, hostID, messageID string) (domain.Turn, error) {
	return scanTurn(s.r.QueryRowContext(ctx, `SELECT `+turnCols+` FROM turns WHERE COALESCE(host_id, '') = ? AND message_id = ?`,
		hostID, messageID))
}

// holdingStates are the states in which a Turn holds its terminal
// (domain.TurnState.HoldsTerminal).
const holdingStates = `('dispatching', 'working', 'awaiting_approval', 'awaiting_interaction', 'waiting_for_host',
	'stalled', 'delivery_uncertain', 'response_uncertain')`

// HoldingTurn returns the Turn that holds the endpoint, if any.
func (s *Store) HoldingTurn(ctx context.Context, ep domain.EndpointRef) (domain.Turn, error) {
	return scanTurn(s.r.QueryRowContext(ctx, `SELECT `+turnCols+` FROM turns WHERE endpoint_kind = ? AND endpoint_id = ? AND state IN `+holdingStates+`
		ORDER BY created_at DESC LIMIT 1`, string(endpointKind(ep)), ep.ID))
}

func (t *tx) InsertSession(ctx context.Context, s domain.Session) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO sessions(session_id, host_id, terminal_id, native_thread_id, created_at, revision)
		VALUES (?, ?, ?, ?, ?, ?)`, s.ID, nullable(s.HostID), s.TerminalID, s.NativeThreadID, ts(s.CreatedAt), s.Revision)
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

const sessionCols = `session_id, COALESCE(host_id, ''), terminal_id, native_thread_id, created_at, revision`

func scanSession(row interface{ Scan(...any) error }) (domain.Session, error) {
	var s domain.Session
	var created sql.NullString
	err := row.Scan(&s.ID, &s.HostID, &s.TerminalID, &s.NativeThreadID, &created, &s.Revision)
	if errors.Is(err, sql.ErrNoRows) {
		return s, domain.ErrNotFound
	}
	s.CreatedAt = parseTS(created)
	return s, err
}

func (t *tx) Session(ctx context.Context, id string) (domain.Session, error) {
	return scanSession(t.tx.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE session_id = ?`, id))
}

func (t *tx) BindSession(ctx context.Context, id string, rev int64, threadID string) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE sessions SET native_thread_id = ?, revision = revision + 1
		WHERE session_id = ? AND revision = ?`, threadID, id, rev)
	if err != nil {
		return fmt.Errorf("bind session: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return domain.ErrRevisionConflict
	}
	return nil
}

// Turn returns one Turn.
func (s *Store) Turn(ctx context.Context, id string) (domain.Turn, error) {
	return scanTurn(s.r.QueryRowContext(ctx, `SELECT `+turnCols+` FROM turns WHERE turn_id = ?`, id))
}

// Session returns one session.
func (s *Store) Session(ctx context.Context, id string) (domain.Session, error) {
	return scanSession(s.r.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE session_id = ?`, id))
}

// Turns lists Turns, newest first.
func (s *Store) Turns(ctx context.Context, f domain.TurnFilter) ([]domain.Turn, error) {
	q := `SELECT ` + turnCols + ` FROM turns WHERE 1 = 1`
	var args []any
	if !f.All {
		q += ` AND COALESCE(host_id, '') = ?`
		args = append(args, f.HostID)
	}
	if f.State != "" {
		q += ` AND state = ?`
		args = append(args, string(f.State))
	}
	if f.Holding {
		q += ` AND state IN ` + holdingStates
	}
	if f.Terminal != "" {
		q += ` AND terminal_id = ?`
		args = append(args, f.Terminal)
	}
	if f.Owned {
		q += ` AND node = ?`
		args = append(args, s.node)
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	q += ` ORDER BY created_at DESC, turn_id DESC LIMIT ?`
	args = append(args, f.Limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list turns: %w", err)
	}
	defer rows.Close()
	out := []domain.Turn{}
	for rows.Next() {
		t, err := scanTurn(rows)
		if err != nil {
			return nil, fmt.Errorf("list turns: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RecentTurnsOf implements domain.Store: one query, each endpoint's newest
// per rows picked by a window over its Turns.
func (s *Store) RecentTurnsOf(ctx context.Context, eps []domain.EndpointRef, per int) (map[domain.EndpointRef][]domain.Turn, error) {
	out := map[domain.EndpointRef][]domain.Turn{}
	if len(eps) == 0 || per <= 0 {
		return out, nil
	}
	args := make([]any, 0, 2*len(eps)+1)
	for _, ep := range eps {
		args = append(args, string(endpointKind(ep)), ep.ID)
	}
	args = append(args, per)
	q := `SELECT ` + turnCols + ` FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY endpoint_kind, endpoint_id ORDER BY created_at DESC, turn_id DESC) AS akk_rank
		FROM turns WHERE (endpoint_kind = ? AND endpoint_id = ?)` + strings.Repeat(` OR (endpoint_kind = ? AND endpoint_id = ?)`, len(eps)-1) + `) recent
		WHERE akk_rank <= ? ORDER BY endpoint_kind, endpoint_id, created_at DESC, turn_id DESC`
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("recent turns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTurn(rows)
		if err != nil {
			return nil, fmt.Errorf("recent turns: %w", err)
		}
		out[t.Endpoint] = append(out[t.Endpoint], t)
	}
	return out, rows.Err()
}

// NotificationsAbout lists the outbox rows of the events about one record (a Turn or a Watch).
func (s *Store) NotificationsAbout(ctx context.Context, turnID string) ([]domain.Notification, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+prefixed("n.", notificationCols)+` FROM notifications n
		JOIN events e ON e.event_id = n.event_id WHERE e.subject = ? ORDER BY n.created_at`, turnID)
	if err != nil {
		return nil, fmt.Errorf("turn notifications: %w", err)
	}
	defer rows.Close()
	out := []domain.Notification{}
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// storedEndpoint is the endpoint a record is stored under: its own, or,
// when it names none, the one its public id names.
func storedEndpoint(e domain.EndpointRef, publicID string) domain.EndpointRef {
	if e.ID == "" {
		return domain.ParseEndpoint(publicID)
	}
	return e
}

// endpointKind is the kind stored for e: a pane unless it names another.
func endpointKind(e domain.EndpointRef) domain.EndpointKind {
	if e.Kind == "" {
		return domain.EndpointPane
	}
	return e.Kind
}
