package codex

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/agent"
)

// Threads implements agent.ThreadReader: the rollouts under
// $CODEX_HOME/sessions whose session_meta names p's working directory,
// each with its first typed request.
func (Driver) Threads(p agent.Process) ([]domain.NativeThread, error) {
	home, ok := Home(p.Env)
	if !ok {
		return nil, errors.New("Codex's environment names no HOME or CODEX_HOME")
	}
	var files []string
	err := filepath.WalkDir(filepath.Join(home, "sessions"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && rolloutName.MatchString(path) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files) // by date and time in the name
	if len(files) > agent.MaxThreadFiles {
		files = files[len(files)-agent.MaxThreadFiles:]
	}
	var out []domain.NativeThread
	for _, f := range files {
		id := rolloutName.FindStringSubmatch(f)[1]
		mine := false
		title, mod, err := agent.FirstRequest(f, func(line []byte) (string, bool) {
			var l struct {
				Type    string `json:"type"`
				Payload struct {
					Type    string `json:"type"`
					Cwd     string `json:"cwd"`
					Message string `json:"message"`
				} `json:"payload"`
			}
			if json.Unmarshal(line, &l) != nil {
				return "", false
			}
			switch {
			case l.Type == "session_meta":
				if l.Payload.Cwd != p.Cwd {
					return "\x00", true // another project's thread
				}
				mine = true
				return "", false
			case l.Type == "event_msg" && l.Payload.Type == "user_message" && agent.Typed(l.Payload.Message):
				return l.Payload.Message, true
			}
			if e, ok := ParseRolloutLine(line); ok && e.Kind == agent.EntryUserPrompt && agent.Typed(e.Text) {
				return e.Text, true
			}
			return "", false
		})
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		if !mine || title == "" || title == "\x00" {
			continue
		}
		out = append(out, domain.NativeThread{NativeThreadID: id, Title: strings.TrimSpace(title), UpdatedAt: mod.UTC()})
	}
	return out, nil
}
