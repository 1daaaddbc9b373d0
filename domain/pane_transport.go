package domain

// PaneTransport is the pane adapter's port: what Turns, Watches,
// permission prompts, questionnaire steps and native controls need of an
// agent's terminal pane, each one bounded step that says what it proved.
// The domain never sees keys, screens or file formats. As ThreadTransport
// is a daemon's threads', it is the one port of its transport, wired in
// once (UsePanes).
//
// What only some panes can do, a pane transport may also implement:
// ComposerClearer, ScreenExcerpter, DialogReader, ChannelReader,
// ScreenReader, ThreadAnchor, and the native controls'
// ModelControls, ModelRepairer and PermissionControls.
type PaneTransport interface {
	TurnTerminal
	ApprovalTerminal
	InteractionTerminal
	WatchTerminal
	NativeControls
	PaneObservers
}
