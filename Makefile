# ducklm — two commands on a fresh Debian/Ubuntu machine:
#   make run    install what is missing, build, open the window
#   make test   install what is missing, run every test (Go, frontend, desktop)
# Both are idempotent: a second run only redoes what changed.

SHELL := /bin/bash
.DEFAULT_GOAL := run

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X ducklm/backend.Version=$(VERSION)
BIN := build/bin/ducklm
APT_PACKAGES := libgtk-3-dev libwebkit2gtk-4.1-dev pkg-config xvfb chromium bubblewrap imagemagick xdotool fonts-noto-color-emoji postgresql tesseract-ocr
APT_PACKAGE_TOOLS := dpkg-dev imagemagick lintian desktop-file-utils appstream libglib2.0-bin

GO_SOURCES := $(shell find . -name '*.go' -not -path './frontend/*' -not -path './tests/*' -not -name '*_test.go') \
	go.mod go.sum $(wildcard migrations/*.sql) build/appicon.png
BINDING_SOURCES := $(wildcard app/*.go) $(shell find backend -name '*.go' -not -name '*_test.go')
FRONT_SOURCES := $(shell find frontend/src frontend/public -type f 2>/dev/null) \
	frontend/index.html frontend/package.json $(wildcard frontend/vite.config.ts frontend/tsconfig*.json)

.PHONY: run test build deps go-deps frontend-deps mcp-conformance-deps langgraph-deps install uninstall bench bench-task perf clean test-go test-fuzz test-frontend test-desktop test-e2e test-real package test-package

## deps: system packages (apt, only when missing), Go modules, frontend packages
deps: .deps/apt go-deps frontend-deps

# apt_install installs the packages of $(1) that are missing (sudo when not root).
define apt_install
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	$(2) \
	if [ -n "$$missing" ]; then \
		echo "Installing:$$missing"; \
		sudo=""; [ "$$(id -u)" -ne 0 ] && sudo=sudo; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi
	@mkdir -p .deps && touch $@
endef

.deps/apt: Makefile
	$(call apt_install,$(APT_PACKAGES),command -v node >/dev/null || missing="$$missing nodejs npm";)

# The tools that build and check the Debian package (make package, test-package).
.deps/apt-package: Makefile
	$(call apt_install,$(APT_PACKAGE_TOOLS))

# Go fetches the modules a build needs by itself; this only checks the
# toolchain is there, with a sentence when it is not.
go-deps: .deps/go
.deps/go: go.mod go.sum
	@command -v go >/dev/null || { echo "Go is missing: install Go 1.26 from https://go.dev/dl and run make again."; exit 1; }
	@mkdir -p .deps && touch $@

frontend-deps: frontend/node_modules/.ci-stamp
frontend/node_modules/.ci-stamp: frontend/package-lock.json frontend/package.json
	cd frontend && npm ci --no-audit --no-fund
	@touch $@

# The MCP conformance suite (tests/mcpconformance), from its own lock file.
mcp-conformance-deps: tests/mcpconformance/node_modules/.ci-stamp
tests/mcpconformance/node_modules/.ci-stamp: tests/mcpconformance/package-lock.json tests/mcpconformance/package.json
	cd tests/mcpconformance && npm ci --no-audit --no-fund
	@touch $@

# LangGraph.js, what the bench compares ducklm's step and checkpoints with (tests/langgraph),
# from its own lock file; not part of test. npm here runs no install scripts
# and better-sqlite3's prebuilt binaries are not reachable, so its native
# module is built by the pinned node-gyp against the running node's headers
# (nodesource's nodejs ships them, Debian's in libnode-dev).
NODE_PREFIX = $$(dirname "$$(dirname "$$(readlink -f "$$(command -v node)")")")
.deps/apt-langgraph: Makefile
	$(call apt_install,python3 make g++,command -v node >/dev/null || missing="$$missing nodejs npm"; \
		[ -f "$(NODE_PREFIX)/include/node/common.gypi" ] || missing="$$missing libnode-dev";)

langgraph-deps: tests/langgraph/node_modules/.ci-stamp
tests/langgraph/node_modules/.ci-stamp: tests/langgraph/package-lock.json tests/langgraph/package.json | .deps/apt-langgraph
	@node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 17) ? 0 : 1)' || \
		{ echo "LangGraph.js needs Node.js >= 20.17; this node is $$(node --version)."; exit 1; }
	@[ -f "$(NODE_PREFIX)/include/node/common.gypi" ] || \
		{ echo "No headers for this node ($$(command -v node)): $(NODE_PREFIX)/include/node/common.gypi is missing."; exit 1; }
	cd tests/langgraph && npm ci --ignore-scripts --no-audit --no-fund
	@echo "building better-sqlite3 against the headers under $(NODE_PREFIX) (about a minute)"
	@cd tests/langgraph/node_modules/better-sqlite3 && ../.bin/node-gyp rebuild --release --nodedir="$(NODE_PREFIX)" >build.log 2>&1 || \
		{ tail -n 20 build.log; echo "better-sqlite3 did not build (tests/langgraph/node_modules/better-sqlite3/build.log)"; exit 1; }
	cd tests/langgraph && node -e 'new (require("better-sqlite3"))(":memory:").close()'
	@touch $@

## bindings: regenerate the typed frontend bindings when the bound Go API changes
frontend/wailsjs/go/app/App.d.ts: $(BINDING_SOURCES) | .deps/go
	go tool wails generate module -tags webkit2_41 >/dev/null
	@chmod 644 frontend/wailsjs/runtime/* # Wails writes them 0755 on some runs; git keeps 0644
	@touch $@

frontend/dist/index.html: frontend/node_modules/.ci-stamp frontend/wailsjs/go/app/App.d.ts $(FRONT_SOURCES)
	cd frontend && npm run build

## build: the desktop binary at build/bin/ducklm
build: deps $(BIN)
$(BIN): $(GO_SOURCES) frontend/dist/index.html
	go tool wails build -s -skipbindings -tags webkit2_41 -ldflags "$(LDFLAGS)" >/dev/null
	@test -x $@ && echo "built $@"

run: build
	@if [ -z "$$DISPLAY" ] && [ -z "$$WAYLAND_DISPLAY" ]; then \
		echo "No display: run 'make run' inside a desktop session (or use the CLI: $(BIN) help)."; exit 1; fi
	./$(BIN)

## test: every test — Go (with the race detector), frontend (Vitest), desktop smoke (Xvfb), browser journeys,
## and the real-model suite against a real Ollama server
test: deps
	$(MAKE) --no-print-directory test-go test-fuzz test-frontend test-desktop test-e2e test-package

# The real Ollama server of the real-model tests: built once per version from
# the Go module proxy (12–14 min on 2 cores) and cached outside the checkout;
# a failed build stops the recipe.
OLLAMA_SERVER = ollama_bin=$$(scripts/ollama-server.sh) && export DUCKLM_OLLAMA_BIN=$$ollama_bin &&

test-go: .deps/go frontend/dist/index.html mcp-conformance-deps
	go vet ./...
	go test -race -count=1 ./backend/... ./app/... .
	$(OLLAMA_SERVER) go test -count=1 -timeout 25m $$(go list ./tests/... | grep -v -e /tests/desktop -e /tests/package)

## test-real: only the real-model suite (tests/realmodel) against a real Ollama server
test-real: .deps/go
	$(OLLAMA_SERVER) go test -count=1 -timeout 25m -v ./tests/realmodel/

## test-fuzz: the fuzz targets of hostile input — plan JSON and bundle manifests — $(FUZZTIME) each
# A count, not a duration: Go 1.26's fuzz coordinator can fail a target
# with a bare "context deadline exceeded" when a duration's deadline lands
# while a worker is busy (golang/go#75804, fixed in Go 1.27); a count has no
# deadline to race. A real finding still fails, with its input written.
FUZZTIME ?= 40000x
test-fuzz: .deps/go
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./backend/taskgraph/
	go test -run '^$$' -fuzz '^FuzzParseManifest$$' -fuzztime $(FUZZTIME) ./backend/bundle/

test-frontend: frontend/node_modules/.ci-stamp
	cd frontend && npm test

test-desktop: $(BIN)
	DUCKLM_BIN=$(CURDIR)/$(BIN) scripts/with-display.sh go test -count=1 -run Desktop -v ./tests/desktop/

## test-e2e: browser journeys — `ducklm serve` with a fake Ollama, driven in Debian's Chromium (tests/e2e)
E2E_FAKE_OLLAMA := build/bin/e2e-fakeollama
E2E_REAL_OLLAMA := build/bin/e2e-realollama
E2E_PG_SERVER := build/bin/e2e-pgserver
test-e2e: $(BIN)
	go build -o $(E2E_FAKE_OLLAMA) ./tests/e2e/fakeollama
	go build -o $(E2E_REAL_OLLAMA) ./tests/realmodel/cmd/realollama
	go build -o $(E2E_PG_SERVER) ./tests/e2e/pgserver
	$(OLLAMA_SERVER) cd tests/e2e && npm ci --no-audit --no-fund && \
		DUCKLM_BIN=$(CURDIR)/$(BIN) FAKE_OLLAMA_BIN=$(CURDIR)/$(E2E_FAKE_OLLAMA) \
		REAL_OLLAMA_BIN=$(CURDIR)/$(E2E_REAL_OLLAMA) PG_SERVER_BIN=$(CURDIR)/$(E2E_PG_SERVER) node --test

## package: the Debian package build/ducklm_<version>_<arch>.deb (then: sudo apt install ./build/ducklm_*.deb)
package: build .deps/apt-package
	scripts/package.sh $(BIN)

## test-package: lintian, desktop-file-validate and appstreamcli on the package; install it with apt,
## launch the installed entry under Xvfb, remove it; the data directory stays byte-identical (needs root)
test-package: package
	DUCKLM_DEB="$$(ls $(CURDIR)/build/ducklm_*.deb)" scripts/with-display.sh go test -count=1 -timeout 10m -v ./tests/package/

## install: the binary, icon and desktop entry into your local dirs
install: build
	install -Dm755 $(BIN) $(HOME)/.local/bin/ducklm
	install -Dm644 build/appicon.png $(HOME)/.local/share/icons/hicolor/512x512/apps/ducklm.png
	sed "s|^Exec=ducklm|Exec=$(HOME)/.local/bin/ducklm|" build/linux/ducklm.desktop > /tmp/ducklm.desktop.$$$$ && \
		install -Dm644 /tmp/ducklm.desktop.$$$$ $(HOME)/.local/share/applications/ducklm.desktop && rm /tmp/ducklm.desktop.$$$$
	-update-desktop-database $(HOME)/.local/share/applications 2>/dev/null
	@echo "installed: $(HOME)/.local/bin/ducklm and the ducklm desktop entry"

uninstall:
	rm -f $(HOME)/.local/bin/ducklm $(HOME)/.local/share/applications/ducklm.desktop \
		$(HOME)/.local/share/icons/hicolor/512x512/apps/ducklm.png

# The bench rows against LangGraph.js say n/a, with the reason, when it does
# not install here; the rest of the bench runs regardless.
LANGGRAPH_OR_NA = $(MAKE) --no-print-directory langgraph-deps || echo "LangGraph.js did not install (above): its rows will say n/a."

## bench: the benchmarks, with ratios measured in one run
bench: .deps/go
	@$(LANGGRAPH_OR_NA)
	scripts/bench.sh

## bench-task: only what a task run's step costs, as a table of goal against measured
bench-task: .deps/go
	@$(LANGGRAPH_OR_NA)
	scripts/bench.sh task

## bench-startup: only what a command costs before its job, against the dynamic loader's floor
.PHONY: bench-startup
bench-startup: .deps/go
	scripts/bench.sh startup

## perf: the GUI's performance targets measured in Chromium and the desktop window (not part of test)
perf: $(BIN)
	DUCKLM_BIN=$(CURDIR)/$(BIN) scripts/perf.sh

clean:
	rm -rf build/bin build/package build/ducklm_*.deb frontend/dist/assets frontend/dist/index.html .deps
