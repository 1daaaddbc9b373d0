package domain

// TurnCases is the Turns' use case: Send, the Turn actions (cancel, close,
// renew, recover, respond, a callback sent again) and the Turn reads
// (status, progress, screen, changes, the gauges). It holds the ports a
// Turn needs and the components it shares with the other use cases, and
// reaches the others it answers through by their own types.
type TurnCases struct {
	basics
	*inputGate
	*turnLedger
	*sendCore
	terminals Terminals
	turns     *turns
	screens   ScreenReader // the panes', when they read screens
	endpoints *endpointRegistry
	mons      *Monitors
	hosts     *HostCases
	nat       *NativeCases
	threads   *ThreadCases
	ic        *InteractionCases
	ac        *ApprovalCases
}

// endpointOf is the endpoint registered for ref's kind (endpointRegistry.of).
func (s *TurnCases) endpointOf(ref EndpointRef) Endpoint { return s.endpoints.of(ref) }
