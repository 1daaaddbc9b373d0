package codex

import (
	"slices"
	"testing"

	"akk/terminaldrivers/screen"
)

// Model menus of 0.171.0 as captured (120x40, eleven models): it scrolls
// eight rows at a time, "↑"/"↓" mark rows out of view, rows past 9 lose
// their number, and it opens on the model in effect.
const (
	modelMenuAtCurrent = `
  Select Model and Effort

↑
  4. GPT-6.1-Sol         Previous generation model for coding and everyday work.
  5. GPT-6-Astra         Previous generation model for complex coding and professional work.
  6. GPT-6-Sol           Legacy model for coding and everyday work.
  7. GPT-6-Luna          Fast and affordable model for easier tasks.
  8. GPT-5.6-Sol         Legacy model for coding and everyday work.
  9. GPT-5.6-Terra       Legacy balanced model for agentic coding.
      GPT-5.6-Luna       Legacy fast model for simpler tasks.
›     GPT-5.5 (current)  Legacy coding model.

  enter select · esc back
`
	modelMenuTop = `
  Select Model and Effort


› 1. GPT-6.2-Sol         Fast, go-to model for coding and everyday work.
  2. GPT-6.2-Astra       Our most capable model for complex coding and professional work.
  3. GPT-6.1 Terra       Efficient model that excels at visual understanding and computer use.
  4. GPT-6.1-Sol         Previous generation model for coding and everyday work.
  5. GPT-6-Astra         Previous generation model for complex coding and professional work.
  6. GPT-6-Sol           Legacy model for coding and everyday work.
  7. GPT-6-Luna          Fast and affordable model for easier tasks.
  8. GPT-5.6-Sol         Legacy model for coding and everyday work.
↓
  enter select · esc back
`
	modelMenuMiddle = `
  Select Model and Effort

↑
› 3. GPT-6.1 Terra       Efficient model that excels at visual understanding and computer use.
  4. GPT-6.1-Sol         Previous generation model for coding and everyday work.
  5. GPT-6-Astra         Previous generation model for complex coding and professional work.
  6. GPT-6-Sol           Legacy model for coding and everyday work.
  7. GPT-6-Luna          Fast and affordable model for easier tasks.
  8. GPT-5.6-Sol         Legacy model for coding and everyday work.
  9. GPT-5.6-Terra       Legacy balanced model for agentic coding.
      GPT-5.6-Luna       Legacy fast model for simpler tasks.
↓
  enter select · esc back
`
	// A custom provider's model (0.169.0): the built-in catalogue, no
	// "(current)" row.
	modelMenuCustom = `
  Select Model and Effort


› 1. GPT-6.1-Sol    Latest workhorse model for coding and everyday work.
  2. GPT-6-Astra    Frontier intelligence for the most demanding work.
  3. GPT-6-Sol      Previous generation workhorse model.
  4. GPT-6-Luna     Fast and affordable model for easier tasks.
  5. GPT-5.6-Sol    Older generation workhorse model.
  6. GPT-6.1 Terra  GPT-6.1 Terra Codex model.
  7. GPT-5.6-Terra  Older balanced model for straightforward work.
  8. GPT-5.6-Luna   Older fast and efficient model.
↓
  enter select · esc back
`
)

func TestModelMenuWindow(t *testing.T) {
	var p Profile
	for _, q := range Profiles {
		if q.Version == "0.171.0" {
			p = q
		}
	}
	for _, tc := range []struct {
		name                 string
		screen               string
		first                string
		n, selected, current int
		above, below, whole  bool
	}{
		{"at current", modelMenuAtCurrent, "GPT-6.1-Sol", 8, 7, 7, true, false, false},
		{"top", modelMenuTop, "GPT-6.2-Sol", 8, 0, -1, false, true, false},
		{"middle", modelMenuMiddle, "GPT-6.1 Terra", 8, 0, -1, true, true, false},
		{"custom model", modelMenuCustom, "GPT-6.1-Sol", 8, 0, -1, false, true, false},
	} {
		c := screen.Parse(tc.screen)
		m, ok := p.readModelWindow(c)
		if !ok || len(m.Labels) != tc.n || m.Labels[0] != tc.first || m.Selected != tc.selected || m.Current != tc.current ||
			m.Above != tc.above || m.Below != tc.below {
			t.Errorf("%s: window %+v %v", tc.name, m, ok)
		}
		if _, ok := p.readModelMenu(c); ok != tc.whole {
			t.Errorf("%s: read whole %v", tc.name, ok)
		}
		if !slices.Contains(m.Labels, "GPT-6-Luna") {
			t.Errorf("%s: labels %v", tc.name, m.Labels)
		}
		if !codexModels(p).Open(c) {
			t.Errorf("%s: the open menu is not seen as a residue", tc.name)
		}
	}
}
