package domain

// Failpoint is called at each stage of input where a crash would leave the
// most doubt: "send.reserved" (a Turn reserved, no key yet),
// "input.pasted" and "input.verified" (the request pasted, then proven in
// the composer, Enter not yet pressed), "send.entered" and
// "respond.entered" (Enter pressed, not yet recorded), "approval.reserved"
// and "approval.sent" (an approval's fingerprint fenced, then its key
// sent), "interaction.reserved" and "interaction.sent", "cancel.requested"
// and "cancel.sent". It does nothing; the daemon built with the failpoints
// tag (a test build, never a release) kills itself at the stage its
// AKK_FAILPOINT names, so the crash matrix can prove a restart repeats no
// input and loses no callback.
var Failpoint = func(stage string) {}

// FailError is called where a step may fail without undoing what came
// before it: "send.watch" (storing a Send's Watch), and a native control
// whose surface just opened ("models.opened", "set_model.opened",
// "permissions.opened", "set_permissions.opened", "status.opened": the
// next frame is then taken as unreadable). It returns nil; the daemon
// built with the failpoints tag returns an error at the stages its
// AKK_FAILERR names (comma-separated), so a test can prove the failure
// costs only what it should.
var FailError = func(stage string) error { return nil }
