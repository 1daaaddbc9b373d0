package domain

// UseThreadTransport wires a thread transport in: its threads are listed
// as conversations and may be sent to; with its endpoint wired in too
// (UseEndpoint: endpoints.UseThreadTransport does both), watched, and
// their prompts and questions answered. A kind whose ids could be read as another's (an
// empty prefix, one that begins another's) is a wiring mistake: it
// panics, before any id is read.
func (s *ThreadCases) UseThreadTransport(k ThreadKind, t ThreadTransport) {
	if err := registerIDPrefix(k); err != nil {
		panic(err)
	}
	tt := &threadTransport{ThreadKind: k, calls: t}
	if s.threadKinds == nil {
		s.threadKinds = map[EndpointKind]*threadTransport{}
	}
	s.threadKinds[k.Endpoint] = tt
}
