package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

type turnChanges struct {
	TurnID  string `json:"turn_id"`
	Changes []struct {
		Seq        int       `json:"seq"`
		Path       string    `json:"path"`
		Operation  string    `json:"operation"`
		Diff       string    `json:"diff"`
		Truncated  bool      `json:"truncated"`
		RecordedAt time.Time `json:"recorded_at"`
	} `json:"changes"`
	LimitReached bool `json:"limit_reached"`
}

// checkTurnChanges sends a task that edits two files (one new, one
// changed) and reads what the Turn changed: both files with their diffs,
// from the agent's record, a secret in them redacted; another host reads
// nothing of it. Claude Code asks before each file edit: AKK answers
// approve_once where it offers the decision (its hook, the exact channel),
// else the person answers in the pane (AKK's screen grammar does not
// answer a file edit's dialog: manual_required). viaAKK and inPane count
// them.
func checkTurnChanges(t *testing.T, e *agenttest.Env, url string, target map[string]string, host, other hostCreds) (viaAKK, inPane int) {
	t.Helper()
	projectDir := e.ProjectDir
	if err := os.WriteFile(filepath.Join(projectDir, fakemodel.EditOldFile), []byte(fakemodel.EditOldContent), 0o644); err != nil {
		t.Fatal(err)
	}
	body := map[string]string{"request": "Edit two files " + fakemodel.Marker(fakemodel.ScenarioEdit, "dir", projectDir)}
	for k, v := range target {
		body[k] = v // the pane's terminal_id, or a backend conversation_id
	}
	req, _ := json.Marshal(body)
	var s sendAnswer
	// A pane still busy with what came before (a draft being erased) is
	// refused with nothing typed: sent again once it is idle.
	for deadline := time.Now().Add(agenttest.Patient(20 * time.Second)); ; time.Sleep(200 * time.Millisecond) {
		code := call(t, "POST", url+"/v1/turns", host.Token, string(req), &s)
		if code == 202 {
			break
		}
		if code != 409 || s.Code != "terminal_not_idle" || time.Now().After(deadline) {
			t.Fatalf("edit send: %d %+v", code, s)
		}
	}
	logged := false
	for deadline := time.Now().Add(agenttest.Patient(90 * time.Second)); ; time.Sleep(100 * time.Millisecond) {
		var st approvalStatus
		call(t, "GET", url+"/v1/turns/"+s.TurnID, host.Token, "", &st)
		if st.State == "completed" {
			break
		}
		switch {
		case st.State != "awaiting_approval" || st.Approval == nil:
		case !st.Approval.ManualRequired:
			if !strings.Contains(st.Approval.CommandExcerpt, "akk-edit-") {
				t.Fatalf("the edit's prompt offered as %+v", st.Approval)
			}
			var res sendAnswer
			if code := call(t, "POST", url+"/v1/turns/"+s.TurnID+"/approval", host.Token, `{"decision":"approve_once"}`, &res); code == 200 && res.Outcome == "done" {
				viaAKK++
			}
		default:
			if q := dialogQuestion(e.Settle()); q != "" {
				e.Press("Enter") // 1. Yes, as the person at the pane
				inPane++
				for time.Now().Before(deadline) && dialogQuestion(e.Settle()) == q {
					time.Sleep(50 * time.Millisecond) // until this dialog is gone (the next may follow at once)
				}
			} else if scr := e.Capture(); !logged {
				logged = true
				t.Logf("the Turn awaits approval; the pane shows no dialog yet:\n%s", scr)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edit turn did not complete: %+v, approval %+v", st, st.Approval)
		}
	}
	var got turnChanges
	if code := call(t, "GET", url+"/v1/turns/"+s.TurnID+"/changes", host.Token, "", &got); code != 200 || got.TurnID != s.TurnID || got.LimitReached {
		t.Fatalf("changes: %d %+v", code, got)
	}
	if len(got.Changes) != 2 {
		t.Fatalf("%d changes, want 2: %+v", len(got.Changes), got)
	}
	created, updated := got.Changes[0], got.Changes[1]
	if created.Seq != 1 || created.Path != fakemodel.EditNewFile || created.Operation != "created" || created.Truncated ||
		!strings.HasPrefix(created.Diff, "--- /dev/null\n+++ b/"+fakemodel.EditNewFile+"\n@@ -0,0 +1,3 @@\n+alpha\n+beta\n+aws_key=") {
		t.Errorf("the created file: %+v", created)
	}
	if updated.Seq != 2 || updated.Path != fakemodel.EditOldFile || updated.Operation != "updated" ||
		updated.Diff != "--- a/"+fakemodel.EditOldFile+"\n+++ b/"+fakemodel.EditOldFile+"\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n" {
		t.Errorf("the changed file: %+v", updated)
	}
	if strings.Contains(created.Diff, fakemodel.SecretAWSKey) || strings.Contains(created.Diff, "AKIA") {
		t.Errorf("a secret crossed the API in a diff: %q", created.Diff)
	}
	if created.RecordedAt.IsZero() || updated.RecordedAt.Before(created.RecordedAt) {
		t.Errorf("recorded at %v then %v", created.RecordedAt, updated.RecordedAt)
	}
	var prob struct {
		Code string `json:"code"`
	}
	if code := call(t, "GET", url+"/v1/turns/"+s.TurnID+"/changes", other.Token, "", &prob); code != 404 {
		t.Errorf("another host read the changes: %d %+v", code, prob)
	}
	if code := call(t, "GET", url+"/v1/turns/turn_AKKnone0000/changes", host.Token, "", &prob); code != 404 {
		t.Errorf("the changes of no Turn: %d %+v", code, prob)
	}
	t.Logf("edit turn: %d prompts answered through AKK, %d in the pane", viaAKK, inPane)
	return viaAKK, inPane
}

// dialogQuestion is the question line of Claude Code's permission dialog
// on screen ("Do you want to create x?"), "" when none shows.
func dialogQuestion(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "Do you want to") {
			return l
		}
	}
	return ""
}
