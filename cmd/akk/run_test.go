package main

import (
	"github.com/coder/quartz"

	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/callbacks"
	"akk/cmd/akk/client"
	"akk/domain"
	"akk/handlers"
	"akk/persistence"
	"akk/persistence/storetest"
)

type ids struct {
	mu sync.Mutex
	n  int
}

func (i *ids) New(p string) string {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.n++
	return p + "_" + strings.Repeat("x", 8) + string(rune('a'+i.n))
}
func (i *ids) Secret(n int) []byte { return bytes.Repeat([]byte{byte(i.n)}, n) }

// server runs the real handler stack in-process, with a state dir holding the operator token.
func server(t *testing.T) (url, stateDir string) { return cliServer(t, nil) }

// cliServer is server with the service's ports (terminals, turns,
// approvals) wired by use before its monitors start; all of it stops when
// the test ends.
func cliServer(t *testing.T, use func(*domain.Service)) (url, stateDir string) {
	t.Helper()
	stateDir = t.TempDir()
	store, err := storetest.OpenLocation(context.Background(), storetest.NewLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := domain.NewService(store, quartz.NewReal(), &ids{}, handlers.NewValidator())
	svc.UseOperatorToken(context.Background(), "op")
	os.WriteFile(filepath.Join(stateDir, "operator.token"), []byte("op\n"), 0o600)
	if use != nil {
		use(svc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.StartTurnMonitors(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); svc.WaitTurnMonitors() })
	hub := callbacks.NewHub()
	store.OnChange(func(persistence.Change) { hub.Notify() })
	h, err := handlers.New(handlers.Deps{Service: svc, Hub: hub, Metrics: handlers.NewMetrics(), Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, stateDir
}

func akk(t *testing.T, ctx context.Context, url, stateDir string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	env := map[string]string{"AKK_URL": url, "AKK_STATE_DIR": stateDir}
	err := run(ctx, append([]string{"akk"}, args...), func(k string) string { return env[k] }, &out)
	return out.String(), err
}

func TestCLIAgainstTheAPI(t *testing.T) {
	url, dir := server(t)
	ctx := context.Background()
	out, err := akk(t, ctx, url, dir, "health")
	if err != nil || !strings.Contains(out, "ok (version t)") {
		t.Fatalf("health: %v %q", err, out)
	}
	out, err = akk(t, ctx, url, dir, "--json", "hosts", "add", "--name", "bot", "--webhook-url", "http://127.0.0.1:9/h")
	if err != nil {
		t.Fatalf("hosts add: %v %s", err, out)
	}
	var h struct {
		HostID string `json:"host_id"`
		Token  string `json:"token"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil || h.HostID == "" || h.Token == "" {
		t.Fatalf("hosts add --json: %v %q", err, out)
	}
	out, err = akk(t, ctx, url, dir, "hosts", "list")
	if err != nil || !strings.Contains(out, h.HostID) || !strings.Contains(out, "WEBHOOK URL") || strings.Contains(out, h.Token) {
		t.Fatalf("hosts list: %v %q", err, out)
	}
	// Delivery headers and event types: names shown, values never.
	out, err = akk(t, ctx, url, dir, "hosts", "add", "--name", "claw", "--webhook-url", "http://127.0.0.1:9/hooks/akk",
		"--header", "Authorization: Bearer hooks-secret-1", "--header", "x-openclaw-token:hooks-secret-2", "--event", "turn.completed", "--event", "turn.failed")
	if err != nil || !strings.Contains(out, "headers:        Authorization, x-openclaw-token") ||
		!strings.Contains(out, "events:         turn.completed, turn.failed") || strings.Contains(out, "hooks-secret") {
		t.Fatalf("hosts add --header --event: %v %q", err, out)
	}
	claw := strings.Fields(strings.SplitN(out, "\n", 2)[0])[1]
	out, err = akk(t, ctx, url, dir, "hosts", "list")
	if err != nil || !strings.Contains(out, "Authorization,x-openclaw-token") || !strings.Contains(out, "turn.completed,turn.failed") ||
		strings.Contains(out, "hooks-secret") {
		t.Fatalf("hosts list with headers: %v %q", err, out)
	}
	out, err = akk(t, ctx, url, dir, "--json", "hosts", "set-webhook", claw, "--url", "http://127.0.0.1:9/hooks/b", "--header", "X-Token: hooks-secret-3")
	var set struct {
		WebhookURL  string   `json:"webhook_url"`
		HeaderNames []string `json:"webhook_header_names"`
		Events      []string `json:"webhook_events"`
	}
	if err != nil || json.Unmarshal([]byte(out), &set) != nil || set.WebhookURL != "http://127.0.0.1:9/hooks/b" ||
		strings.Join(set.HeaderNames, ",") != "X-Token" || len(set.Events) != 0 || strings.Contains(out, "hooks-secret") {
		t.Fatalf("hosts set-webhook: %v %q", err, out)
	}
	if _, err = akk(t, ctx, url, dir, "hosts", "set-webhook", claw, "--url", "http://127.0.0.1:9/hooks/b", "--header", "Host: x"); err == nil ||
		!strings.Contains(err.Error(), "validation_failed") {
		t.Fatalf("a refused header: %v", err)
	}
	if _, err = akk(t, ctx, url, dir, "hosts", "set-webhook", claw, "--url", "http://127.0.0.1:9/hooks/b", "--event", "turn.progress"); err == nil ||
		!strings.Contains(err.Error(), "validation_failed") {
		t.Fatalf("an unknown event type: %v", err)
	}
	if _, err = akk(t, ctx, url, dir, "hosts", "set-webhook", claw, "--url", "http://127.0.0.1:9/hooks/b", "--header", "no-colon"); err == nil {
		t.Fatal("a header without a colon was taken")
	}
	if out, err = akk(t, ctx, url, dir, "hosts", "set-webhook", claw, "--url", "http://127.0.0.1:9/hooks/c"); err != nil ||
		!strings.Contains(out, "events:         all") || strings.Contains(out, "headers:") {
		t.Fatalf("hosts set-webhook without headers: %v %q", err, out)
	}
	if out, err = akk(t, ctx, url, dir, "hosts", "ping", h.HostID); err != nil || !strings.Contains(out, "queued msg_") {
		t.Fatalf("ping: %v %q", err, out)
	}
	if out, err = akk(t, ctx, url, dir, "notifications"); err != nil || !strings.Contains(out, "host.ping") {
		t.Fatalf("notifications: %v %q", err, out)
	}
	out, err = akk(t, ctx, url, dir, "hosts", "rotate-token", h.HostID)
	if err != nil || !strings.Contains(out, "new token for "+h.HostID+": akk_h_") {
		t.Fatalf("rotate-token: %v %q", err, out)
	}
	if _, err = akk(t, ctx, url, dir, "--token", h.Token, "notifications"); err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("the old host token after rotate-token: %v", err)
	}
	// The exact-command auto-approval policy: off, set, refused, off again.
	if out, err = akk(t, ctx, url, dir, "hosts", "approval-policy", h.HostID); err != nil || !strings.Contains(out, "auto-approval is off") {
		t.Fatalf("approval-policy: %v %q", err, out)
	}
	if out, err = akk(t, ctx, url, dir, "hosts", "approval-policy", h.HostID, "--rule", "touch notes.txt", "--rule", "make test"); err != nil ||
		!strings.Contains(out, "touch notes.txt") || !strings.Contains(out, "make test") {
		t.Fatalf("approval-policy --rule: %v %q", err, out)
	}
	if _, err = akk(t, ctx, url, dir, "hosts", "approval-policy", h.HostID, "--rule", "rm -rf /"); err == nil || !strings.Contains(err.Error(), "validation_failed") {
		t.Fatalf("an unsafe rule: %v", err)
	}
	if out, err = akk(t, ctx, url, dir, "hosts", "approval-policy", h.HostID); err != nil || !strings.Contains(out, "make test") {
		t.Fatalf("a refused policy changed the stored one: %v %q", err, out)
	}
	if out, err = akk(t, ctx, url, dir, "hosts", "approval-policy", h.HostID, "--off"); err != nil || !strings.Contains(out, "auto-approval is off") {
		t.Fatalf("approval-policy --off: %v %q", err, out)
	}
	// Errors carry the problem code.
	if _, err = akk(t, ctx, url, dir, "hosts", "ping", "host_nope"); err == nil || !strings.Contains(err.Error(), "host_not_found") {
		t.Fatalf("ping unknown host: %v", err)
	}
	if _, err = akk(t, ctx, url, dir, "--token", "wrong", "hosts", "list"); err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("wrong token: %v", err)
	}
	if out, err = akk(t, ctx, url, dir, "hosts", "delete", h.HostID); err != nil || !strings.Contains(out, "removed "+h.HostID) {
		t.Fatalf("delete: %v %q", err, out)
	}
	if out, err = akk(t, ctx, url, dir, "hosts", "list"); err != nil || strings.Contains(out, h.HostID) {
		t.Fatalf("hosts list after delete: %v %q", err, out)
	}
	// screen names the terminal it could not read.
	if _, err = akk(t, ctx, url, dir, "screen", "term_nope"); err == nil || !(strings.Contains(err.Error(), "terminal_not_found") || strings.Contains(err.Error(), "unavailable")) {
		t.Fatalf("screen of no pane: %v", err)
	}
	if _, err = akk(t, ctx, url, dir, "screen"); err == nil || !strings.Contains(err.Error(), "usage: akk screen TERMINAL_ID") {
		t.Fatalf("screen without a terminal: %v", err)
	}
	// events follows the stream; it replays from --since.
	ectx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out, err = akk(t, ectx, url, dir, "events", "--follow", "--since", "0")
	if err != nil || !strings.Contains(out, "host.created") || !strings.Contains(out, "host.ping") {
		t.Fatalf("events: %v %q", err, out)
	}
}

// What a newcomer meets first: errors that say what to do, with an exit
// code by class; global flags after the command; host:port; did you mean.
func TestCLIErrorsSayWhatToDo(t *testing.T) {
	url, dir := server(t)
	ctx := context.Background()
	hostPort := strings.TrimPrefix(url, "http://")
	if out, err := akk(t, ctx, "http://127.0.0.1:1", dir, "health", "--url", hostPort); err != nil || !strings.Contains(out, "ok (version t) at "+url) {
		t.Fatalf("--url HOST:PORT after the command: %v %q", err, out)
	}
	if out, err := akk(t, ctx, url, dir, "hosts", "list", "--json"); err != nil || !strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Fatalf("--json after the command: %v %q", err, out)
	}
	if out, err := akk(t, ctx, url, dir, "--version"); err != nil || !strings.HasPrefix(out, "akk ") {
		t.Fatalf("--version: %v %q", err, out)
	}
	for _, c := range []struct {
		name string
		url  string
		args []string
		exit int
		says []string
	}{
		{"akkd down", "http://127.0.0.1:1", []string{"list"}, exitUnreachable, []string{"akkd does not answer at http://127.0.0.1:1", "akkd", "--url HOST:PORT"}},
		{"a wrong token", url, []string{"--token", "wrong", "hosts", "list"}, exitRefused, []string{"unauthorized", "operator.token", "akk hosts add"}},
		{"a typo", url, []string{"lsit"}, exitUsage, []string{`did you mean "list"?`}},
		{"a swapped pair", url, []string{"stauts", "turn_x"}, exitUsage, []string{`did you mean "status"?`}},
		{"an unknown flag", url, []string{"--jsno", "list"}, exitUsage, []string{"jsno", "akk help"}},
		{"a bad url", "ftp://x", []string{"list"}, exitUsage, []string{"--url", "HOST:PORT"}},
		{"missing arguments", url, []string{"approve", "turn_x"}, exitUsage, []string{"usage: akk approve"}},
		{"not found", url, []string{"hosts", "ping", "host_nope"}, exitNotFound, []string{"host_not_found"}},
	} {
		_, err := akk(t, ctx, c.url, dir, c.args...)
		if exitCode(err) != c.exit {
			t.Errorf("%s: exit %d, want %d (%v)", c.name, exitCode(err), c.exit, err)
			continue
		}
		for _, want := range c.says {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %q", c.name, err, want)
			}
		}
	}
	// No state dir with a token: where akk looked, and what to do.
	_, err := akk(t, ctx, url, t.TempDir(), "list")
	if err == nil || !strings.Contains(err.Error(), "operator.token") || !strings.Contains(err.Error(), "Start akkd first") {
		t.Fatalf("no token: %v", err)
	}
}

func TestHoistGlobals(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"akk list --json", "akk --json list"},
		{"akk --url a:1 list --json", "akk --url a:1 --json list"},
		{"akk status turn_1 --token T", "akk --token T status turn_1"},
		{"akk hosts set-webhook h --url http://x/h", "akk hosts set-webhook h --url http://x/h"},
		{"akk send term_1 hello -- --json", "akk send term_1 hello -- --json"},
		{"akk send --wait term_1 hi --json", "akk --json send --wait term_1 hi"},
		{"akk list --url=a:1", "akk --url=a:1 list"},
	} {
		if got := strings.Join(hoistGlobals(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}

func TestActionNamesOnce(t *testing.T) {
	var as []client.Action
	for _, n := range strings.Split("status,unwatch,status,cancel,close,status", ",") {
		as = append(as, client.Action{Action: n})
	}
	if got := strings.Join(actionNames(as), ","); got != "status,unwatch,cancel,close" {
		t.Fatalf("%s", got)
	}
}

// Completion scripts load in their shells; help names a command's use;
// a mistyped flag of a command gets its closest flag.
func TestCLICompletionHelpAndFlagTypos(t *testing.T) {
	url, dir := server(t)
	ctx := context.Background()
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, err := akk(t, ctx, url, dir, "completion", sh)
		if err != nil || !strings.Contains(out, "akk") || len(out) < 500 {
			t.Fatalf("completion %s: %v (%d bytes)", sh, err, len(out))
		}
		bin, lerr := exec.LookPath(sh)
		if lerr != nil {
			if sh == "bash" {
				t.Fatal("no bash to load the script")
			}
			continue
		}
		f := filepath.Join(t.TempDir(), "akk."+sh)
		os.WriteFile(f, []byte(out), 0o644)
		if b, err := exec.Command(bin, "-n", f).CombinedOutput(); err != nil {
			t.Fatalf("%s -n: %v %s", sh, err, b)
		}
	}
	if out, err := akk(t, ctx, url, dir, "help"); err != nil || !strings.Contains(out, "Exit codes") {
		t.Fatalf("help: %v %q", err, out)
	}
	if out, err := akk(t, ctx, url, dir, "help", "send"); err != nil || !strings.Contains(out, "akk send [--wait]") {
		t.Fatalf("help send: %v %q", err, out)
	}
	if out, err := akk(t, ctx, url, dir, "send", "--help"); err != nil || !strings.Contains(out, "akk send [--wait]") {
		t.Fatalf("send --help: %v %q", err, out)
	}
	if _, err := akk(t, ctx, url, dir, "send", "--wiat", "term_x", "hi"); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "did you mean --wait?") {
		t.Fatalf("send --wiat: %v", err)
	}
	if _, err := akk(t, ctx, url, dir, "hosts", "add", "--nmae", "x"); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "did you mean --name?") {
		t.Fatalf("hosts add --nmae: %v", err)
	}
}

// The config file gives the URL and the token file, under the flags and
// the environment; a key it does not know is refused.
func TestCLIConfigFile(t *testing.T) {
	url, dir := server(t)
	ctx := context.Background()
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "akk", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	tok := filepath.Join(cfgDir, "op.token")
	os.WriteFile(tok, []byte("op\n"), 0o600)
	os.WriteFile(cfg, []byte("url = \""+strings.TrimPrefix(url, "http://")+"\"\ntoken_file = \""+tok+"\"\n"), 0o600)
	runWith := func(env map[string]string, args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"akk"}, args...), func(k string) string { return env[k] }, &out)
		return out.String(), err
	}
	// No state dir with a token and no URL but the file's.
	env := map[string]string{"XDG_CONFIG_HOME": cfgDir, "AKK_STATE_DIR": t.TempDir()}
	if out, err := runWith(env, "hosts", "list"); err != nil || !strings.Contains(out, "no hosts") && !strings.Contains(out, "HOST") {
		t.Fatalf("from the config file: %v %q", err, out)
	}
	// A flag wins over the file.
	if _, err := runWith(env, "--url", "127.0.0.1:1", "hosts", "list"); exitCode(err) != exitUnreachable {
		t.Fatalf("--url over the file: %v", err)
	}
	// The token file named there, refused: the message names it.
	os.WriteFile(tok, []byte("wrong\n"), 0o600)
	if _, err := runWith(env, "hosts", "list"); exitCode(err) != exitRefused || !strings.Contains(err.Error(), tok) {
		t.Fatalf("a wrong token from the file: %v", err)
	}
	os.WriteFile(cfg, []byte("ulr = \"x\"\n"), 0o600)
	if _, err := runWith(env, "hosts", "list"); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "ulr") || !strings.Contains(err.Error(), cfg) {
		t.Fatalf("an unknown key: %v", err)
	}
	_ = dir
}

type noPanes struct{}

func (noPanes) Discover(context.Context) ([]domain.Terminal, error) { return nil, nil }
func (noPanes) Diagnose(context.Context) (domain.TerminalDiagnosis, error) {
	return domain.TerminalDiagnosis{Tmux: domain.TmuxStatus{Found: true, Version: "3.3a"},
		Searched: []string{"/tmp/tmux-1000 (this user's tmux sockets)", "/srv/shared.sock"}}, nil
}

// With no agent pane, list and doctor say where they looked and what to do.
func TestCLINoPanesSaysWhereItLooked(t *testing.T) {
	url, dir := cliServer(t, func(svc *domain.Service) {
		svc.UseTerminals(noPanes{})
	})
	ctx := context.Background()
	out, err := akk(t, ctx, url, dir, "list")
	if err != nil || !strings.Contains(out, "searched /tmp/tmux-1000 (this user's tmux sockets), /srv/shared.sock") || !strings.Contains(out, "--tmux-sockets") {
		t.Fatalf("list: %v %q", err, out)
	}
	out, err = akk(t, ctx, url, dir, "doctor")
	if err != nil || !strings.Contains(out, "searched: /tmp/tmux-1000") || !strings.Contains(out, "no tmux server found in /tmp/tmux-1000") {
		t.Fatalf("doctor: %v %q", err, out)
	}
}
