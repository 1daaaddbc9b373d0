package claude

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/agent"
)

// Threads implements agent.ThreadReader: the transcripts of the project
// folder of p's working directory (one per session, named by its UUID),
// each with its first typed request.
func (Driver) Threads(p agent.Process) ([]domain.NativeThread, error) {
	cfg, ok := ConfigDir(p.Env)
	if !ok {
		return nil, errors.New("Claude Code's environment names no HOME or CLAUDE_CONFIG_DIR")
	}
	files, err := filepath.Glob(filepath.Join(ProjectDir(cfg, p.Cwd), "*.jsonl"))
	if err != nil {
		return nil, err
	}
	files = agent.NewestFiles(files, agent.MaxThreadFiles)
	var out []domain.NativeThread
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		if !uuid.MatchString(id) {
			continue
		}
		title, mod, err := agent.FirstRequest(f, func(line []byte) (string, bool) {
			var l struct {
				Cwd string `json:"cwd"`
			}
			if json.Unmarshal(line, &l) == nil && l.Cwd != "" && l.Cwd != p.Cwd {
				return "\x00", true // another project's folder of the same name
			}
			e, ok := ParseTranscriptLineUnwrapping(line)
			if ok && e.Kind == agent.EntryUserPrompt && agent.Typed(e.Text) {
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
		if title == "" || title == "\x00" {
			continue // no request yet, or not this project's
		}
		out = append(out, domain.NativeThread{NativeThreadID: id, Title: title, UpdatedAt: mod.UTC()})
	}
	return out, nil
}
