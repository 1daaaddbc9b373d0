package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/spf13/pflag"
	"os"
	"path/filepath"
	"strings"
)

// Claude Code's hooks that AKK installs: the PermissionRequest hook is the
// exact permission channel (it waits for a decision, up to
// hookPermissionTimeout); the others only tell AKK that a request it holds
// was settled in the pane or left behind (AKK answers them at once, and
// their short limit keeps a slow daemon from holding the person up).
const (
	hookPath              = "/hooks/claude-code"
	hookPermissionTimeout = 600
	hookNoticeTimeout     = 1
	hookCredentialFile    = "claude-hook.token"
	hookBackupSuffix      = ".akk-backup"
)

var hookEvents = []string{"PermissionRequest", "PostToolUse", "PostToolUseFailure", "Stop", "UserPromptSubmit"}

// hooksCmd is `akk hooks install|remove|status|revoke claude-code`.
func (c *cli) hooksCmd(args []string, stateDir string) error {
	if len(args) == 0 {
		return usageErr("usage: akk hooks install|remove|status|revoke claude-code [--settings FILE]")
	}
	verb := args[0]
	fs := newFlags("hooks " + verb)
	home, _ := os.UserHomeDir()
	if h := c.getenv("HOME"); h != "" {
		home = h
	}
	settings := fs.String("settings", filepath.Join(home, ".claude", "settings.json"), "Claude Code settings file")
	rest, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return usageErr(err.Error())
	}
	if len(rest) != 1 || rest[0] != "claude-code" {
		return usageErr("akk hooks " + verb + ": name the agent: claude-code (the only one with hooks AKK installs)")
	}
	switch verb {
	case "install":
		tok, err := readHookCredential(stateDir)
		if err != nil {
			return err
		}
		changed, err := installClaudeHooks(*settings, c.url+hookPath, tok)
		if err != nil {
			return err
		}
		if !changed {
			fmt.Fprintf(c.out, "AKK's hooks are already installed in %s\n", *settings)
			return nil
		}
		fmt.Fprintf(c.out, "installed AKK's hooks in %s (backup: %s)\nClaude Code sessions started from now on send their permission prompts to AKK; running sessions keep the screen.\n", *settings, *settings+hookBackupSuffix)
		return nil
	case "remove":
		removed, err := removeClaudeHooks(*settings)
		if err != nil {
			return err
		}
		if !removed {
			fmt.Fprintf(c.out, "no AKK hooks in %s\n", *settings)
			return nil
		}
		fmt.Fprintf(c.out, "removed AKK's hooks from %s\n", *settings)
		return nil
	case "status":
		st, err := claudeHookStatus(*settings, stateDir)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(c.out, st)
		}
		fmt.Fprintf(c.out, "settings: %s\ninstalled: %v\n", st.Settings, st.Installed)
		if st.Installed {
			fmt.Fprintf(c.out, "url: %s\nevents: %s\ncredential: %s\n", st.URL, strings.Join(st.Events, ", "), st.Credential)
		}
		return nil
	case "revoke":
		if err := revokeHookCredential(stateDir); err != nil {
			return err
		}
		fmt.Fprintln(c.out, "the hook credential was replaced: every installed hook is refused until `akk hooks install claude-code` runs again")
		return nil
	}
	return usageErr("akk hooks: unknown verb " + verb + " (install, remove, status, revoke)")
}

// parseInterleaved parses flags that may come before or after the
// positional arguments.
func parseInterleaved(fs *pflag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, nil
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

func printJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func readHookCredential(stateDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, hookCredentialFile))
	tok := strings.TrimSpace(string(b))
	if err != nil || tok == "" {
		return "", fmt.Errorf("no hook credential in %s: start akkd once (it creates %s), or pass --state-dir", stateDir, hookCredentialFile)
	}
	return tok, nil
}

// revokeHookCredential replaces the credential; akkd reads the file at
// the next hook call, so the old one is refused from then on.
func revokeHookCredential(stateDir string) error {
	path := filepath.Join(stateDir, hookCredentialFile)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no hook credential in %s: %w", stateDir, err)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte("akk_hook_"+base64.RawURLEncoding.EncodeToString(b[:])+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readSettings reads a settings file as JSON (nil, nil when it does not
// exist).
func readSettings(path string) (map[string]any, []byte, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	m := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, nil, fmt.Errorf("%s is not valid JSON (%v); nothing was changed", path, err)
		}
	}
	return m, raw, nil
}

// isAKKHook reports whether a hook entry is one AKK installed.
func isAKKHook(h any) bool {
	m, ok := h.(map[string]any)
	if !ok {
		return false
	}
	u, _ := m["url"].(string)
	return m["type"] == "http" && strings.HasSuffix(u, hookPath)
}

// withoutAKK returns settings with AKK's hook entries taken out (and the
// groups and events they leave empty), and whether any was there.
func withoutAKK(s map[string]any) (map[string]any, bool) {
	hooks, ok := s["hooks"].(map[string]any)
	if !ok {
		return s, false
	}
	found := false
	out := map[string]any{}
	for ev, groups := range hooks {
		list, ok := groups.([]any)
		if !ok {
			out[ev] = groups
			continue
		}
		var kept []any
		for _, g := range list {
			gm, ok := g.(map[string]any)
			inner, ok2 := gm["hooks"].([]any)
			if !ok || !ok2 {
				kept = append(kept, g)
				continue
			}
			var keepInner []any
			for _, h := range inner {
				if isAKKHook(h) {
					found = true
					continue
				}
				keepInner = append(keepInner, h)
			}
			if len(keepInner) == len(inner) {
				kept = append(kept, g)
			} else if len(keepInner) > 0 {
				ng := map[string]any{}
				for k, v := range gm {
					ng[k] = v
				}
				ng["hooks"] = keepInner
				kept = append(kept, ng)
			}
		}
		if len(kept) > 0 {
			out[ev] = kept
		}
	}
	res := map[string]any{}
	for k, v := range s {
		res[k] = v
	}
	if len(out) == 0 {
		delete(res, "hooks")
	} else {
		res["hooks"] = out
	}
	return res, found
}

// installClaudeHooks writes AKK's hooks into the settings file, keeping
// every other setting and hook, with the file as it was before AKK's
// first install kept beside it. It reports whether the file changed.
func installClaudeHooks(path, url, token string) (bool, error) {
	cur, raw, err := readSettings(path)
	if err != nil {
		return false, err
	}
	base, had := withoutAKK(cur)
	if base == nil {
		base = map[string]any{}
	}
	next := map[string]any{}
	for k, v := range base {
		next[k] = v
	}
	hooks := map[string]any{}
	if h, ok := base["hooks"].(map[string]any); ok {
		for k, v := range h {
			hooks[k] = v
		}
	}
	for _, ev := range hookEvents {
		timeout := hookNoticeTimeout
		if ev == "PermissionRequest" {
			timeout = hookPermissionTimeout
		}
		list, _ := hooks[ev].([]any)
		hooks[ev] = append(append([]any{}, list...), map[string]any{
			"matcher": "*",
			"hooks": []any{map[string]any{"type": "http", "url": url, "timeout": timeout,
				"headers": map[string]any{"Authorization": "Bearer " + token}}},
		})
	}
	next["hooks"] = hooks
	out, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return false, err
	}
	out = append(out, '\n')
	if raw != nil && bytes.Equal(out, raw) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, err
	}
	backup := path + hookBackupSuffix
	if !had {
		// The file as the person had it, byte for byte (an empty backup
		// stands for no file at all).
		if err := writeFileAtomic(backup, raw, 0o600); err != nil {
			return false, err
		}
	}
	return true, writeFileAtomic(path, out, 0o600)
}

// removeClaudeHooks takes out exactly AKK's entries. When nothing else
// changed since the install, the file is put back byte for byte from the
// backup (or removed, when there was none).
func removeClaudeHooks(path string) (bool, error) {
	cur, _, err := readSettings(path)
	if err != nil || cur == nil {
		return false, err
	}
	rest, found := withoutAKK(cur)
	if !found {
		return false, nil
	}
	backup := path + hookBackupSuffix
	if orig, err := os.ReadFile(backup); err == nil {
		var origM map[string]any
		same := false
		if len(orig) == 0 {
			same = len(rest) == 0
		} else if json.Unmarshal(orig, &origM) == nil {
			a, _ := json.Marshal(origM)
			b, _ := json.Marshal(rest)
			same = bytes.Equal(a, b)
		}
		if same {
			if len(orig) == 0 {
				err = os.Remove(path)
			} else {
				err = writeFileAtomic(path, orig, filePerm(path))
			}
			if err == nil {
				_ = os.Remove(backup)
			}
			return true, err
		}
	}
	out, err := json.MarshalIndent(rest, "", "  ")
	if err != nil {
		return false, err
	}
	if err := writeFileAtomic(path, append(out, '\n'), filePerm(path)); err != nil {
		return false, err
	}
	_ = os.Remove(backup)
	return true, nil
}

func filePerm(path string) os.FileMode {
	if st, err := os.Stat(path); err == nil {
		return st.Mode().Perm()
	}
	return 0o600
}

func writeFileAtomic(path string, b []byte, perm os.FileMode) error {
	tmp := path + ".akk-tmp"
	if err := os.WriteFile(tmp, b, perm); err != nil {
		return err
	}
	if err := os.Chmod(tmp, perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// hookStatus is what `akk hooks status` reports (never the credential).
type hookStatus struct {
	Settings  string   `json:"settings"`
	Installed bool     `json:"installed"`
	URL       string   `json:"url,omitempty"`
	Events    []string `json:"events,omitempty"`
	// Credential: current (it is akkd's), stale (revoked or another
	// daemon's), or unknown (the state dir is not readable here).
	Credential string `json:"credential,omitempty"`
}

func claudeHookStatus(path, stateDir string) (hookStatus, error) {
	st := hookStatus{Settings: path}
	cur, _, err := readSettings(path)
	if err != nil || cur == nil {
		return st, err
	}
	hooks, _ := cur["hooks"].(map[string]any)
	tok, _ := readHookCredential(stateDir)
	st.Credential = "unknown"
	for _, ev := range hookEvents {
		list, _ := hooks[ev].([]any)
		for _, g := range list {
			gm, _ := g.(map[string]any)
			inner, _ := gm["hooks"].([]any)
			for _, h := range inner {
				if !isAKKHook(h) {
					continue
				}
				st.Installed = true
				hm := h.(map[string]any)
				st.URL, _ = hm["url"].(string)
				st.Events = append(st.Events, ev)
				if hdr, ok := hm["headers"].(map[string]any); ok && tok != "" {
					if hdr["Authorization"] == "Bearer "+tok {
						st.Credential = "current"
					} else {
						st.Credential = "stale"
					}
				}
			}
		}
	}
	return st, nil
}
