package domain

import (
	"context"
	"time"
)

// spentTurnSource is the source of a Turn whose endpoint is out of reach:
// it observes nothing more, and what it observed is decided again on the
// Turn as stored (as a daemon's events are). The monitor decides the
// endpoint lost on it once.
type spentTurnSource struct{}

func (spentTurnSource) Observe(context.Context, time.Time, Turn) ([]Observation, bool) {
	return nil, false
}
func (spentTurnSource) Looks(context.Context) PromptLooks { return noLooks{} }
func (spentTurnSource) Mark(t Turn) DurableMark           { return t.Mark }
func (spentTurnSource) Replays() bool                     { return false }
func (spentTurnSource) ReadFrom(DurableMark)              {}
func (spentTurnSource) LookNow()                          {}
func (spentTurnSource) Foretold(time.Time, Turn)          {}
func (spentTurnSource) Step(context.Context) (AgentKind, InteractionStep, bool) {
	return "", InteractionStep{}, false
}
func (spentTurnSource) Wait(context.Context, <-chan struct{}, time.Time) (bool, bool) {
	return false, false
}
func (spentTurnSource) Close() {}

// spentWatchSource is spentTurnSource for a Watch.
type spentWatchSource struct{}

func (spentWatchSource) Observe(context.Context, time.Time) (Observation, bool, bool) {
	return Observation{}, false, false
}
func (spentWatchSource) Read(context.Context, time.Time) (*TurnProgress, bool) { return nil, false }
func (spentWatchSource) Mark() DurableMark                                     { return "" }
func (spentWatchSource) Replays() bool                                         { return false }
func (spentWatchSource) ReadFrom(DurableMark)                                  {}
func (spentWatchSource) LookNow()                                              {}
func (spentWatchSource) Foretold(time.Time, Watch)                             {}
func (spentWatchSource) Wait(context.Context, <-chan struct{}, time.Time) (bool, bool) {
	return false, false
}
func (spentWatchSource) Close() {}

// noLooks: no look was made, so no decision asks for one.
type noLooks struct{}

func (noLooks) PromptFingerprint(TurnState) string { return "" }
func (noLooks) ConfirmPrompt(string) bool          { return true }
func (noLooks) AsyncQuestion() (string, bool)      { return "", false }
