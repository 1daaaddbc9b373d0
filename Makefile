# AKK build, run and test targets. `make help` lists them.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
TOOLS   ?= $(or $(AKK_NODE_TOOLS_DIR),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/akk/node-tools)

.PHONY: check test-inventory profile-new drift help build run test test-e2e generate lint-contract agents node-tools openclaw pi dsh fixtures fixtures-async fixtures-standin record-first bench bench-e2e bench-monitor bench-scale bench-backend bench-fleet bench-prompt bench-push measures abuse fuzz crash-matrix test-e2e-load ci

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/akkd and bin/akk
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/akkd ./cmd/akkd
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/akk ./cmd/akk

run: ## run the daemon on its defaults (127.0.0.1:7788, state in $XDG_STATE_HOME/akk)
	$(GO) run ./cmd/akkd

generate: ## regenerate server and client code from api/openapi.yaml
	$(GO) generate ./...

check: ## the quick check (under 3 minutes): vet, the contract lint when installed, every test that needs no agent, browser, OpenClaw or PostgreSQL (go test -short)
	$(GO) vet ./...
	@if [ -x "$(TOOLS)/node_modules/.bin/redocly" ]; then $(TOOLS)/node_modules/.bin/redocly lint --config api/redocly.yaml api/openapi.yaml; else echo "contract lint skipped: make node-tools"; fi
	$(GO) test -short -count=1 ./...

test: ## vet, lint the contract, run every test (agent tests skip when agents are not installed)
	bash scripts/test.sh

test-inventory: ## each end-to-end test of the last `make test` and the agent versions it passed on, and the total (test, version) pairs
	@$(GO) run ./scripts/inventory -floor "$$(grep -v '^#' scripts/test-floor.txt)" .test-results/go-test.json

test-e2e: ## only the real-agent end-to-end tests (needs `make agents`)
	AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -timeout 40m -run '^TestE2E' -v ./...

lint-contract: ## lint api/openapi.yaml with redocly (needs `make node-tools`)
	$(TOOLS)/node_modules/.bin/redocly lint --config api/redocly.yaml api/openapi.yaml

agents: ## install the pinned Claude Code and Codex versions (scripts/agents.txt) into the cache
	bash scripts/install-agents.sh

node-tools: ## install the Node tools the tests use (standardwebhooks, redocly)
	bash scripts/install-node-tools.sh

openclaw: ## install the pinned OpenClaw and the Node 24 it needs (scripts/openclaw.txt) into the cache, for its host test
	bash scripts/install-openclaw.sh

pi: ## install the pinned Pi coding agent and the Node 24 it needs (scripts/pi.txt) into the cache, for its host test
	bash scripts/install-pi.sh

dsh: ## install the pinned DeepSeek Harness, its plugin packages and the Node 24 it needs (scripts/dsh.txt, scripts/dsh/) into the cache, for its host test
	bash scripts/install-dsh.sh

fixtures: ## recapture the screen fixtures from the real agents
	AKK_CAPTURE_FIXTURES=1 AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -timeout 30m -run '^TestCaptureFixtures$$' -v ./terminaldrivers/agenttest/

fixtures-async: ## recapture the async question screens (Codex 0.154.0 and later)
	AKK_CAPTURE_ASYNC=1 AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -timeout 20m -run '^TestCaptureAsyncFixtures$$' -v ./terminaldrivers/agenttest/

bench: ## run the benchmarks that need no agent and print their figures
	$(GO) test -run '^$$' -bench '^Benchmark[^E]' -benchmem ./...

measures: ## the design's measures of the code: long functions, wide domain types and back-pointers, real time in the domain, transport checks outside the endpoint registry
	$(GO) run ./scripts/measures

bench-push: ## a permission prompt's way to the phone and back on the newest Claude Code and Codex: prompt on screen -> push at the push service, tap -> dialog gone (median, p95)
	AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -run '^$$' -bench '^BenchmarkE2EPushLatency$$' -benchtime=10x ./cmd/akkd/

bench-e2e: ## detection latency on every pinned agent: durable completion record -> webhook (median, p95)
	AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -run '^$$' -bench '^BenchmarkE2EDetectionLatency$$' -benchtime=20x ./cmd/akkd/

bench-monitor: ## what monitoring costs: akkd and tmux CPU, RSS, four real panes idle then working
	AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -run '^$$' -bench '^BenchmarkE2EMonitorCPU$$' -benchtime=1x ./cmd/akkd/

bench-scale: ## monitoring at scale: 1, 10, 100 stand-in panes of Codex and of Claude Code, then four real agents: CPU, RSS, list, prompt and detection latency
	AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -timeout 30m -run '^$$' -bench '^BenchmarkE2E(Scale|MonitorCPU)$$' -benchtime=1x ./cmd/akkd/

bench-backend: ## the Codex backend on the newest pinned Codex: list latency with and without the daemon's threads, send to completion through the daemon and through the pane
	AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -timeout 10m -run '^$$' -bench '^BenchmarkE2EBackend$$' -benchtime=1x ./cmd/akkd/

abuse: ## replay a hostile local client's attacks against a real akkd: each answer, peak RSS, slowest health meanwhile
	$(GO) test -count=1 -timeout 10m -run '^$$' -bench '^BenchmarkE2EAbuse$$' -benchtime=1x ./cmd/akkd/

bench-fleet: ## a fleet of three nodes on one PostgreSQL, 10 stand-in panes each: list latency, an event across nodes, webhooks/s with 3 and 1 delivering nodes, a dead node's delivery taken over
	$(GO) test -count=1 -timeout 15m -run '^$$' -bench '^BenchmarkE2EFleet$$' -benchtime=1x ./cmd/akkd/

bench-prompt: ## on every pinned version: a permission prompt, then a question, drawn in the pane -> its webhook; and through Claude Code's hook: the hook's request -> its webhook (median, max of 5)
	AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -timeout 30m -run '^$$' -bench '^BenchmarkE2E(Hook)?PromptLatency$$' -benchtime=5x ./cmd/akkd/

fixtures-standin: ## rerecord what the scale stand-ins replay (the newest Claude Code and Codex 0.155.1 working, then asking for permission)
	AKK_CAPTURE_STANDIN=1 AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -timeout 5m -run '^TestCaptureStandin$$' -v ./terminaldrivers/agenttest/

record-first: ## on every pinned version: which comes first, a tool call in the record (and Claude Code's "waiting") or its prompt on screen
	AKK_RECORD_FIRST=1 AKK_REQUIRE_AGENTS=1 $(GO) test -count=1 -timeout 20m -run '^TestRecordFirst$$' -v ./terminaldrivers/agenttest/ | grep -E 'RECORD-FIRST|^(--- |ok|FAIL)'

profile-new: ## a new release's profile: AGENT=claude-code|codex VERSION=x installs it, captures its screens, reads them with the nearest profile and adds the profile when all read the same (else lists what differs)
	bash scripts/profile-new.sh $(AGENT) $(VERSION)

drift: ## install the registry's newest Claude Code and Codex (or RELEASES="claude@x codex@y") and print what works there
	bash scripts/drift.sh $(RELEASES)

FUZZTIME ?= 1m
FUZZ_TARGETS := ./terminaldrivers/claude:FuzzScreen ./terminaldrivers/claude:FuzzRecordLine \
	./terminaldrivers/codex:FuzzScreen ./terminaldrivers/codex:FuzzRecordLine \
	./handlers:FuzzRequestBodies ./handlers:FuzzEventCursor

fuzz: ## run every fuzz target for FUZZTIME each (default 1m; e.g. make fuzz FUZZTIME=10m)
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "== $$pkg $$fn ($(FUZZTIME))"; $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg; done

test-e2e-load: ## the end-to-end suite with a CPU hog on every core, RUNS times in a row (default 3; needs stress-ng)
	bash scripts/test-e2e-load.sh

CRASH_TRIALS ?= 20
crash-matrix: ## kill -9 akkd at every input stage CRASH_TRIALS times (default 20) on the newest agents; prints the table
	AKK_REQUIRE_AGENTS=1 AKK_CRASH_TRIALS=$(CRASH_TRIALS) $(GO) test -count=1 -timeout 120m -run '^TestE2ECrashMatrix$$' -v ./cmd/akkd \
	  | grep -v '^ *│' | grep -E -A13 'crash matrix|--- FAIL|_test.go:[0-9]+:|^(FAIL|ok)'

ci: agents node-tools ## what CI runs: install everything, then the whole suite with nothing skipped
	AKK_REQUIRE_AGENTS=1 AKK_REQUIRE_TOOLS=1 bash scripts/test.sh
