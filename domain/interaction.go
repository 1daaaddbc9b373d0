package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// InteractionSchema names the public projection format.
const InteractionSchema = "agent-knock-knock/terminal-interaction"

// Interaction is the public projection of one questionnaire step: opaque
// semantic ids only, never keys, indexes or screen text beyond the labels.
type Interaction struct {
	Schema        string                `json:"schema"`
	Version       int                   `json:"version"`
	InteractionID string                `json:"interaction_id"`
	TurnID        string                `json:"turn_id"`
	Agent         string                `json:"agent"`
	Kind          string                `json:"kind"`
	State         string                `json:"state"`
	Step          InteractionStepIndex  `json:"step"`
	Questions     []InteractionQuestion `json:"questions"`
	Capabilities  InteractionCaps       `json:"capabilities"`
	// ManualRequired: AKK will not answer this step; a person must.
	ManualRequired bool   `json:"manual_required,omitempty"`
	Reason         string `json:"reason,omitempty"`
	FreeTextLimit  int    `json:"free_text_limit,omitempty"`
	// DeliveryModes: how an async question's answer may reach the agent
	// (the first is the default); empty for a blocking questionnaire.
	DeliveryModes []string `json:"delivery_modes,omitempty"`
	// ExpiresAt is when the offer this projection made ends (answer before).
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// InteractionStepIndex is where the step stands in its questionnaire.
type InteractionStepIndex struct {
	Index int `json:"index"`
	Total int `json:"total"`
}

// InteractionQuestion is one question of the projection.
type InteractionQuestion struct {
	QuestionID   string              `json:"question_id"`
	Header       string              `json:"header"`
	Prompt       string              `json:"prompt"`
	Required     bool                `json:"required"`
	ResponseKind string              `json:"response_kind"`
	Options      []InteractionOption `json:"options"`
}

// InteractionOption is one choice; FreeText says it carries the answer's text.
type InteractionOption struct {
	OptionID string `json:"option_id"`
	Label    string `json:"label"`
	FreeText bool   `json:"free_text,omitempty"`
}

// InteractionCaps says what a response may do.
type InteractionCaps struct {
	BatchResponse bool `json:"batch_response"`
	FreeText      bool `json:"free_text"`
	MultiSelect   bool `json:"multi_select"`
}

// idMapping is an offer's private map from public ids to profile keys.
type idMapping struct {
	Questions map[string]string            `json:"q"`           // question_id -> key
	Kinds     map[string]string            `json:"k"`           // question_id -> response kind
	Required  map[string]bool              `json:"r"`           // question_id -> required
	Options   map[string]map[string]string `json:"o"`           // question_id -> option_id -> key
	Texts     map[string]bool              `json:"t"`           // option_id -> takes text
	Limit     int                          `json:"fl"`          // free text limit
	Delivery  []string                     `json:"d,omitempty"` // advertised delivery modes
}

func opaque(salt []byte, prefix string, parts ...string) string {
	m := hmac.New(sha256.New, salt)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return prefix + hex.EncodeToString(m.Sum(nil))[:20]
}

// stepFence is the prompt a step's answer fences: that step in that Turn.
// Its occurrences are fenced one by one (fenceKey): a step stays on screen
// until the agent takes the answer, so one occurrence is never answered
// twice; the same step asked again after a proven answer, or in a later
// Turn, is a new occurrence, answerable.
func stepFence(t Turn, fingerprint string) string { return t.ID + "|" + fingerprint }

// KindAsyncQuestion is the kind of a step asked while the Turn works on.
const KindAsyncQuestion = "async_question"

// answerableIn reports whether the step st on screen belongs to Turn t's
// state: any step while t awaits an interaction, an async question only
// while t works.
func answerableIn(t Turn, st InteractionStep) bool {
	return st.Present && (t.State != TurnWorking || st.Kind == KindAsyncQuestion)
}
