// Package screencases reads captured screen fixtures (one folder per case)
// and checks a driver's profiles against them. Tests import it.
package screencases

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"akk/domain"
	"akk/terminaldrivers/screen"
)

// ScreenCase is one captured screen with its expected classification: a
// folder <root>/<version>/<case>/ holding screen.ansi (capture-pane -e),
// screen.txt (capture-pane) and meta.json.
type ScreenCase struct {
	Version string
	Name    string
	Dir     string
	ANSI    string
	Plain   string
	// Expected is meta.json's expected_state.
	Expected domain.ScreenState
	// ComposerEmpty is meta.json's composer_empty, nil when not stated.
	ComposerEmpty *bool
	// Title is meta.json's pane_title, the pane's title at capture time.
	Title string
}

// Capture parses the case's screen.
func (c ScreenCase) Capture() screen.Capture {
	sc := screen.Parse(c.ANSI)
	sc.Title = c.Title
	return sc
}

// Read reads every case under root, sorted by version and name. A
// missing root has no cases.
func Read(root string) ([]ScreenCase, error) {
	versions, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []ScreenCase
	for _, v := range versions {
		if !v.IsDir() {
			continue
		}
		cases, err := os.ReadDir(filepath.Join(root, v.Name()))
		if err != nil {
			return nil, err
		}
		for _, c := range cases {
			if !c.IsDir() {
				continue
			}
			sc, err := readCase(filepath.Join(root, v.Name(), c.Name()))
			if err != nil {
				return nil, err
			}
			sc.Version, sc.Name = v.Name(), c.Name()
			out = append(out, sc)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Version != out[j].Version {
			return out[i].Version < out[j].Version
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func readCase(dir string) (ScreenCase, error) {
	sc := ScreenCase{Dir: dir}
	ansi, err := os.ReadFile(filepath.Join(dir, "screen.ansi"))
	if err != nil {
		return sc, fmt.Errorf("screen case %s: %w", dir, err)
	}
	plain, err := os.ReadFile(filepath.Join(dir, "screen.txt"))
	if err != nil {
		return sc, fmt.Errorf("screen case %s: %w", dir, err)
	}
	metaJSON, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return sc, fmt.Errorf("screen case %s: %w", dir, err)
	}
	var meta struct {
		ExpectedState string `json:"expected_state"`
		ComposerEmpty *bool  `json:"composer_empty"`
		PaneTitle     string `json:"pane_title"`
	}
	if err := json.Unmarshal(metaJSON, &meta); err != nil {
		return sc, fmt.Errorf("screen case %s meta.json: %w", dir, err)
	}
	if meta.ExpectedState == "" {
		return sc, fmt.Errorf("screen case %s: meta.json has no expected_state", dir)
	}
	sc.ANSI, sc.Plain = string(ansi), string(plain)
	sc.Expected, sc.ComposerEmpty, sc.Title = domain.ScreenState(meta.ExpectedState), meta.ComposerEmpty, meta.PaneTitle
	return sc, nil
}
