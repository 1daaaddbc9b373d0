package domain

import "slices"

// paneOnly are the pane actions a merged row keeps besides its thread's:
// the thread's daemon sends, watches and reads models exactly, so the
// pane's own send, watch and model controls give way to those (and its
// thread needs no identifying).
func paneOnly(a Action) bool {
	switch a.Name {
	case "send", "watch", "model_options", "set_model", "identify_foreground":
		return false
	}
	return true
}

// mergePane is one row for a backend thread and the pane proven to show
// it: the thread's identity, Turns and actions, and the pane's own
// controls (its threads, permissions, native controls, its Watches and
// Turns). While a backend Turn holds the thread, a prompt on the pane is
// that Turn's, answered through the daemon only, by its owner.
func mergePane(pane, back Conversation) Conversation {
	c := back
	c.Terminal, c.PaneID = pane.Terminal, pane.ID
	// The pane's thread is proven: it is this one.
	c.Terminal.NativeIdentity, c.Terminal.NativeThreadID = IdentityResolved, back.Backend.ThreadID
	// The row's Turns go through the daemon, and so do their prompts and
	// questions.
	c.Terminal.Channels = TerminalChannels{Permission: ChannelAppServer, Question: ChannelAppServer}
	c.Terminal.Warnings = slices.DeleteFunc(slices.Clone(pane.Terminal.Warnings), func(w string) bool { return w == WarnDaemonThread })
	// A backend Turn holds the thread (the caller's, or another
	// controller's): its prompt is answered through the daemon by its
	// owner only, never with the pane's keys.
	byBackend := back.CurrentTurn != nil || back.HeldByOther
	if pane.CurrentTurn != nil || pane.HeldByOther {
		// A pane Turn holds the pane: no second task through the daemon.
		c.Actions = slices.DeleteFunc(c.Actions, func(a Action) bool { return a.Name == "send" })
	}
	for _, a := range pane.Actions {
		if !paneOnly(a) || (byBackend && a.Name == "approve" && a.On == OnTerminal) {
			continue
		}
		c.Actions = append(c.Actions, a)
	}
	c.Watches = append(c.Watches, pane.Watches...)
	if c.SessionID == "" {
		c.SessionID = pane.SessionID
	}
	if c.CurrentTurn == nil {
		c.CurrentTurn, c.HeldByOther = pane.CurrentTurn, c.HeldByOther || pane.HeldByOther
	}
	if c.RecentTurn == nil {
		c.RecentTurn = pane.RecentTurn
	}
	if c.Approval == nil && !byBackend {
		c.Approval = pane.Approval
	}
	return c
}
