package persistence

import "context"

// StopKeeping stops the keeper of this daemon's lock session without
// ending the session: the session stays, silent, as when the daemon's
// machine vanished without closing its connection.
func (s *Store) StopKeeping() {
	s.held.closing.Do(func() { close(s.held.stop) })
	<-s.held.done
}

// Exec runs one statement on the store's database, for a test to set up
// what no method writes.
func (s *Store) Exec(ctx context.Context, q string, args ...any) error {
	_, err := s.w.ExecContext(ctx, q, args...)
	return err
}

// LockSession is the backend pid of the session holding this daemon's
// lock (0 while none does).
func (s *Store) LockSession() int64 {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	return s.held.pid
}
