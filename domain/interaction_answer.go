package domain

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Delivery modes of an async question's answer.
const (
	DeliverySteerCurrentTurn = "steer_current_turn"
	DeliveryQueueNextTurn    = "queue_next_turn"
)

// InteractionAnswer answers one question of a step in public terms.
type InteractionAnswer struct {
	QuestionID        string
	ResponseKind      string
	SelectedOptionIDs []string
	Text              *string
}

// RespondInteractionInput is a response to one step.
type RespondInteractionInput struct {
	InteractionID string
	TurnID        string // optional echo of the path's turn
	Answers       []InteractionAnswer
	DeliveryMode  string
}

// resolve checks answers against the offer's mapping and returns them in
// the profile's terms. Every refusal here happens before any input.
func (m idMapping) resolve(in RespondInteractionInput) ([]StepAnswer, error) {
	queue := false
	switch {
	case in.DeliveryMode == "":
	case len(m.Delivery) == 0:
		return nil, Invalid("delivery_mode is only for async questions that advertise it; this step does not",
			FieldError{Field: "delivery_mode", Message: "not advertised for this step"})
	case !slices.Contains(m.Delivery, in.DeliveryMode):
		return nil, Invalid("delivery_mode "+in.DeliveryMode+" is not advertised for this step",
			FieldError{Field: "delivery_mode", Message: "one of " + strings.Join(m.Delivery, ", ")})
	default:
		queue = in.DeliveryMode == DeliveryQueueNextTurn
	}
	seen := map[string]bool{}
	var out []StepAnswer
	for i, a := range in.Answers {
		field := fmt.Sprintf("answers[%d]", i)
		key, ok := m.Questions[a.QuestionID]
		if !ok {
			return nil, Invalid("unknown question_id "+a.QuestionID+": use the ids of the current projection",
				FieldError{Field: field + ".question_id", Message: "not a question of this step"})
		}
		if seen[a.QuestionID] {
			return nil, Invalid("question "+a.QuestionID+" is answered twice", FieldError{Field: field, Message: "answered twice"})
		}
		seen[a.QuestionID] = true
		kind := m.Kinds[a.QuestionID]
		if a.ResponseKind != kind {
			return nil, Invalid("response_kind "+a.ResponseKind+" does not match the question's "+kind,
				FieldError{Field: field + ".response_kind", Message: "must be " + kind})
		}
		sa, err := m.answerOf(a, key, kind, field)
		if err != nil {
			return nil, err
		}
		if queue {
			// The native panel queues typed text only.
			if sa.Text == "" {
				return nil, Invalid("queue_next_turn queues a typed answer: give text with the free-text option, or steer a choice",
					FieldError{Field: "delivery_mode", Message: "needs a text answer"})
			}
			sa.Queue = true
		}
		out = append(out, sa)
	}
	for qid, req := range m.Required {
		if req && !seen[qid] {
			return nil, Invalid("question "+qid+" is required", FieldError{Field: "answers", Message: "missing " + qid})
		}
	}
	if len(out) == 0 {
		return nil, Invalid("no answers", FieldError{Field: "answers", Message: "at least one"})
	}
	return out, nil
}

// answerOf is one answer of a question of kind, checked against the
// projection's ids; field names it in errors.
func (m idMapping) answerOf(a InteractionAnswer, key, kind, field string) (StepAnswer, error) {
	sa := StepAnswer{QuestionKey: key}
	switch kind {
	case MultiSelect:
		if len(a.SelectedOptionIDs) == 0 {
			return StepAnswer{}, Invalid("a multi_select answer selects at least one option",
				FieldError{Field: field + ".selected_option_ids", Message: "at least one option_id"})
		}
		if a.Text != nil {
			return StepAnswer{}, Invalid("a multi_select answer takes no text", FieldError{Field: field + ".text", Message: "not allowed"})
		}
		picked := map[string]bool{}
		for k, oid := range a.SelectedOptionIDs {
			okey, ok := m.Options[a.QuestionID][oid]
			f := fmt.Sprintf("%s.selected_option_ids[%d]", field, k)
			if !ok || m.Texts[oid] {
				return StepAnswer{}, Invalid("unknown option_id "+oid+": option ids are opaque; labels and menu numbers are not ids",
					FieldError{Field: f, Message: "not an option of this question"})
			}
			if picked[oid] {
				return StepAnswer{}, Invalid("option "+oid+" is selected twice", FieldError{Field: f, Message: "selected twice"})
			}
			picked[oid] = true
			sa.OptionKeys = append(sa.OptionKeys, okey)
		}
	case SingleSelect, Confirmation:
		if len(a.SelectedOptionIDs) != 1 {
			return StepAnswer{}, Invalid("a "+kind+" answer selects exactly one option",
				FieldError{Field: field + ".selected_option_ids", Message: "exactly one option_id"})
		}
		oid := a.SelectedOptionIDs[0]
		okey, ok := m.Options[a.QuestionID][oid]
		if !ok {
			return StepAnswer{}, Invalid("unknown option_id "+oid+": option ids are opaque; labels and menu numbers are not ids",
				FieldError{Field: field + ".selected_option_ids", Message: "not an option of this question"})
		}
		sa.OptionKeys = []string{okey}
		if m.Texts[oid] {
			if a.Text == nil {
				// Chosen alone, it opens its editor: the next step,
				// answered with text.
				break
			}
			if err := checkFreeText(*a.Text, m.Limit, field); err != nil {
				return StepAnswer{}, err
			}
			sa.Text = *a.Text
		} else if a.Text != nil {
			return StepAnswer{}, Invalid("text is only for an option that carries free text",
				FieldError{Field: field + ".text", Message: "not allowed for this option"})
		}
	case FreeText:
		if a.Text == nil || len(a.SelectedOptionIDs) > 0 {
			return StepAnswer{}, Invalid("a free_text answer gives text and no options", FieldError{Field: field + ".text", Message: "required"})
		}
		if err := checkFreeText(*a.Text, m.Limit, field); err != nil {
			return StepAnswer{}, err
		}
		sa.Text = *a.Text
	default:
		return StepAnswer{}, E(CodeManualRequired, "this question's kind is answered by a person in the pane")
	}
	return sa, nil
}

// FreeTextProblem is the one rule for text typed into a questionnaire:
// one line of printable characters (letters, marks, numbers, punctuation,
// symbols and the ASCII space; so no tab, no U+00A0, no zero-width or
// bidirectional control: none of them is printable), valid UTF-8, no leading or trailing space, within limit
// characters (0: no limit). It says what is wrong, or "".
func FreeTextProblem(text string, limit int) string {
	switch {
	case text == "":
		return "free text must not be empty"
	case !utf8.ValidString(text):
		return "free text is not valid UTF-8"
	case strings.TrimSpace(text) != text:
		return "free text must have no leading or trailing whitespace"
	case strings.ContainsAny(text, "\r\n"):
		return "free text is one line"
	case limit > 0 && utf8.RuneCountInString(text) > limit:
		return fmt.Sprintf("free text is limited to %d characters here", limit)
	}
	for _, r := range text {
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("free text holds %U, which is not a printable character on one line", r)
		}
	}
	return ""
}

func checkFreeText(text string, limit int, field string) error {
	if why := FreeTextProblem(text, limit); why != "" {
		return Invalid(why, FieldError{Field: field + ".text", Message: why})
	}
	return nil
}
