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
	pane := ParseEndpoint("term_1")
	if e, ok := s.endpointOf(pane).(absentEndpoint); !ok || e.kind != EndpointPane {
		t.Errorf("with no pane transport a pane's endpoint is %T, want an absent one", s.endpointOf(pane))
	}
	wired := &registeredEndpoint{absentEndpoint{EndpointPane}}
	s.UseEndpoint(EndpointPane, wired)
	if s.endpointOf(pane) != Endpoint(wired) {
		t.Errorf("a pane's endpoint is %T, not the one wired in", s.endpointOf(pane))
	}
	thread := ParseEndpoint(BackendEndpoint("019a-thread"))
	if e, ok := s.endpointOf(thread).(absentEndpoint); !ok || e.kind != EndpointCodexThread {
		t.Errorf("with no Codex backend a thread's endpoint is %T, want an absent one", s.endpointOf(thread))
	}
	if err := s.endpointOf(thread).Configured(UseApprovals); err == nil {
		t.Errorf("an absent endpoint answers prompts")
	}
	s.UseThreadTransport(CodexThreads, nil)
	if _, ok := s.endpointOf(thread).(absentEndpoint); !ok {
		t.Errorf("a thread transport wired in without its endpoint has one: %T", s.endpointOf(thread))
	}
	threads := &registeredEndpoint{absentEndpoint{EndpointCodexThread}}
	s.UseEndpoint(EndpointCodexThread, threads)
	if s.endpointOf(thread) != Endpoint(threads) {
		t.Errorf("a thread's endpoint is %T, not the one wired in", s.endpointOf(thread))
	}
	if s.endpointOf(pane) != Endpoint(wired) {
		t.Errorf("a thread transport replaced the pane's endpoint")
	}
}

// registeredEndpoint is an endpoint told apart by its address.
type registeredEndpoint struct{ absentEndpoint }

// A thread kind whose ids could be read as another's is refused before
// any id is read: an empty prefix would make every id one of its threads.
func TestThreadKindPrefixesCannotClash(t *testing.T) {
	for _, k := range []ThreadKind{
		{Endpoint: "t1", IDPrefix: ""},
		{Endpoint: "t2", IDPrefix: "x"},
		{Endpoint: "t3", IDPrefix: "term_"},
		{Endpoint: "t4", IDPrefix: "conv_"},
		{Endpoint: "t5", IDPrefix: "c_x_"},
		{Endpoint: "t6", IDPrefix: "cx_"},
		{Endpoint: EndpointPane, IDPrefix: "pn_"},
		{Endpoint: CodexThreads.Endpoint, IDPrefix: "cy_"},
	} {
		if err := registerIDPrefix(k); err == nil {
			t.Errorf("%+v was registered", k)
		}
	}
	if got, ok := kindOfID("term_1"); ok {
		t.Fatalf("a pane's id read as a thread's: %+v", got)
	}
	if err := registerIDPrefix(CodexThreads); err != nil {
		t.Fatalf("Codex again: %v", err)
	}
}
