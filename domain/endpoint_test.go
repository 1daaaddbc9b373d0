package domain

import "testing"

func TestParseEndpointRoundTrips(t *testing.T) {
	for _, c := range []struct {
		id   string
		want EndpointRef
	}{
		{"term_1", EndpointRef{Kind: EndpointPane, ID: "term_1"}},
		{"%3", EndpointRef{Kind: EndpointPane, ID: "%3"}},
		{BackendEndpoint("019a-thread"), EndpointRef{Kind: EndpointCodexThread, ID: "019a-thread"}},
	} {
		got := ParseEndpoint(c.id)
		if got != c.want {
			t.Errorf("ParseEndpoint(%q) = %+v, want %+v", c.id, got, c.want)
		}
		if got.String() != c.id {
			t.Errorf("ParseEndpoint(%q).String() = %q", c.id, got.String())
		}
	}
}

func TestEndpointOfPicksTheTransport(t *testing.T) {
	s := NewService(nil, nil, nil, nil)
	if _, ok := s.endpointOf(ParseEndpoint("term_1")).(*paneEndpoint); !ok {
		t.Errorf("a pane's endpoint is not a paneEndpoint")
	}
	thread := ParseEndpoint(BackendEndpoint("019a-thread"))
	if e, ok := s.endpointOf(thread).(absentEndpoint); !ok || e.kind != EndpointCodexThread {
		t.Errorf("with no Codex backend a thread's endpoint is %T, want an absent one", s.endpointOf(thread))
	}
	if err := s.endpointOf(thread).configured(useApprovals); err == nil {
		t.Errorf("an absent endpoint answers prompts")
	}
	s.UseThreadTransport(CodexThreads, nil)
	if _, ok := s.endpointOf(thread).(threadEndpoint); !ok {
		t.Errorf("a thread's endpoint is not a threadEndpoint")
	}
	if e, ok := s.endpointOf(EndpointRef{Kind: EndpointPane, ID: "term_1"}).(*paneEndpoint); !ok || e.watches != s.WatchCases {
		t.Errorf("the endpoint does not drive the same service")
	}
}
