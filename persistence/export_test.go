package persistence

// StopKeeping stops the keeper of this daemon's lock session without
// ending the session: the session stays, silent, as when the daemon's
// machine vanished without closing its connection.
func (s *Store) StopKeeping() {
	s.held.closing.Do(func() { close(s.held.stop) })
	<-s.held.done
}
