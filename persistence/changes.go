package persistence

import (
	"context"
	"database/sql"
	"fmt"

	"akk/domain"
)

// AddTurnChanges appends a Turn's changes after those stored, keeping at
// most domain.MaxTurnChanges.
func (t *tx) AddTurnChanges(ctx context.Context, turnID string, changes []domain.TurnChange) error {
	var last sql.NullInt64
	if err := t.tx.QueryRowContext(ctx, `SELECT MAX(seq) FROM turn_changes WHERE turn_id = ?`, turnID).Scan(&last); err != nil {
		return fmt.Errorf("turn changes: %w", err)
	}
	seq := int(last.Int64)
	for _, c := range changes {
		if seq >= domain.MaxTurnChanges {
			return nil
		}
		seq++
		_, err := t.tx.ExecContext(ctx, `INSERT INTO turn_changes(turn_id, seq, path, op, diff, truncated, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			turnID, seq, c.Path, string(c.Op), c.Diff, boolInt(c.Truncated), ts(c.At))
		if err != nil {
			return fmt.Errorf("store turn change: %w", err)
		}
	}
	return nil
}

// deleteTurnChanges: a Turn deleted takes its changes along.
func (t *tx) deleteTurnChanges(ctx context.Context, turnID string) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM turn_changes WHERE turn_id = ?`, turnID)
	return err
}

// TurnChanges lists a Turn's stored changes in order.
func (s *Store) TurnChanges(ctx context.Context, turnID string) ([]domain.TurnChange, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq, path, op, diff, truncated, at FROM turn_changes WHERE turn_id = ? ORDER BY seq`, turnID)
	if err != nil {
		return nil, fmt.Errorf("turn changes: %w", err)
	}
	defer rows.Close()
	out := []domain.TurnChange{}
	for rows.Next() {
		var c domain.TurnChange
		var op string
		var truncated int
		var at sql.NullString
		if err := rows.Scan(&c.Seq, &c.Path, &op, &c.Diff, &truncated, &at); err != nil {
			return nil, fmt.Errorf("turn changes: %w", err)
		}
		c.Op, c.Truncated, c.At = domain.FileOp(op), truncated != 0, parseTS(at)
		out = append(out, c)
	}
	return out, rows.Err()
}
