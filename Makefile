# gpuprof — the front door. `make demo` and `make test` are all a new user needs.
GO       ?= go
BIN      ?= bin/gpuprof
HOOKBIN  ?= $(dir $(BIN))gpuprof-hook
FULLHOOKBIN ?= $(dir $(BIN))gpuprof-hook-full
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS  := -X main.version=$(VERSION)
PKGS     := ./...
export CGO_ENABLED := 1

.PHONY: all build test test-full test-smoke test-unit test-e2e demo bench lint fmt vet fuzz update-golden install package package-check clean

all: build

# gpuprof-hook beside gpuprof: the thin hook, which contrib/slurm/hook.sh
# runs when it is there (issue #41: a hook starts as fast as a small
# program); it forwards a prolog or epilog to the agent and hands anything
# else to gpuprof-hook-full beside it, which runs the hook whole.
# It builds without cgo, a static binary that needs no dynamic loader
# (archtest's TestHookBinaryWithoutCgo keeps it buildable so).
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/gpuprof
	CGO_ENABLED=0 $(GO) build -o $(HOOKBIN) ./cmd/gpuprof-hook
	CGO_ENABLED=0 $(GO) build -o $(FULLHOOKBIN) ./cmd/gpuprof-hook-full

# Unit tests and the end-to-end tests under a real Slurm (started by the
# harness in contrib/slurm/testcluster.sh; they skip only when not root or
# without apt, and never when CI=true). The e2e package took 1,499 s on a
# 2-core machine on 2026-12-06 with its scenarios two at a time, most of
# them one at a time; four at a time (e2e/doc.go), 713 s at load 8–17 and
# 628–632 s within a whole `CI=true make test` of about 15.5 minutes;
# with the whole-node tests on the shared cluster (10 clusters, not 16),
# 830 s within a whole run of 14 minutes on 2026-12-07 (the whole-node
# tests run one after another under the node's lease); with whole-node
# tests that give the node back once they no longer need it alone,
# 688–707 s alone, 10 clusters (docs/benchmarks.md, h-e2e3); with the
# two tests that only read the configuration on the shared cluster, 8
# clusters, 735 s within a whole run of 12 minutes 22 s. It is
# named first so that go test starts it first: the longest package,
# it would otherwise wait for those before it alphabetically while the
# rest run beside it. The timeout leaves room for a slower machine, CI's
# own limit is 90 minutes.
TEST_PKGS = $(if $(filter ./...,$(PKGS)),./e2e/... $(shell $(GO) list ./... | grep -v /e2e),$(PKGS))
test: build vet
	GPUPROF_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 45m $(TEST_PKGS)

# Two tiers of end-to-end tests, chosen by name (go test -run): the smoke
# tier, E2E_SMOKE — capture, the controller's records, job ids, the TUI,
# hook crashes and the security tests — for every change (`make
# test-smoke`: the unit tests and the smoke tier, whose longest test took
# 112 s in a whole e2e run of 735 s on 2026-12-07); the full matrix, every
# e2e test, by `make test-full`, which is `make test`: CI runs it while
# the whole CI run stays within 30 minutes. e2e/TestSmokeTierNamesTests fails when a name here is no e2e
# test. No test skips itself for a tier.
E2E_SMOKE = ^(TestCaptureUnderSlurm|TestSchedulerViewMatchesSacct|TestJobIDsAsSlurmPrintsThem|TestTUIInTmux|TestTUIUsersSeeOwnJobs|TestHookCrashes|TestHookCrashOnCluster|TestForeignProcessesCannotClaimJobs|TestLocalAccessUsersSeeOwnJobs|TestHookWrappersRefusePlantedLog|TestPostinstRefusesPlantedLinks|TestCollectorAuth|TestSlurmFacts|TestSmokeTierNamesTests)$$
test-full: test

test-smoke: build vet
	GPUPROF_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 30m -run '$(E2E_SMOKE)' ./e2e/
	$(GO) test -count=1 $(shell $(GO) list ./... | grep -v /e2e$$)

test-unit:
	$(GO) test -count=1 $(shell $(GO) list ./... | grep -v /e2e)

test-e2e: build
	GPUPROF_BIN=$(abspath $(BIN)) $(GO) test -count=1 -v -timeout 45m ./e2e/...

# A simulated GPU node and a handful of simulated jobs through the real
# recording path (agent, hooks, store), then a simulated month of a 4-node
# cluster on a virtual clock and its task profiles. No root, Slurm or GPU
# needed.
demo: build
	./scripts/demo.sh $(abspath $(BIN)) demo-out

bench: build
	$(GO) test -run '^$$' -bench . -benchmem $(shell $(GO) list ./... | grep -v /e2e)
	./scripts/bench-hooks.sh $(abspath $(BIN))
	REPORT=1 GO=$(GO) ./scripts/bench-analysis.sh
	GO=$(GO) ./scripts/bench-report.sh $(abspath $(BIN))
	GO=$(GO) ./scripts/bench-import.sh $(abspath $(BIN))
	GO=$(GO) ./scripts/bench-month.sh $(abspath $(BIN))

fuzz:
	for t in FuzzParseHookEnv FuzzParseIndexList FuzzExpandHostlist FuzzParseGresConf FuzzParseSlurmConf; do \
		$(GO) test ./slurmext -run '^$$' -fuzz "^$$t$$" -fuzztime 20s || exit 1; done

vet:
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

lint: vet
	@if command -v golangci-lint >/dev/null; then golangci-lint run; else echo "golangci-lint not installed; ran go vet and gofmt"; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

update-golden:
	$(GO) test ./... -run Golden -update

# The binary goes in /usr/local/bin, on every user's PATH: it is the users'
# command (gpuprof jobs, show, tui) as well as the agent and the hooks. An
# earlier make install's /usr/local/sbin/gpuprof is removed: it would come
# first on root's PATH. Man pages: users' commands in section 1, daemons
# and hooks in 8. gpuprof-hook goes in /usr/local/lib/gpuprof, where the
# hook wrapper looks for it (users never run it), with gpuprof-hook-full,
# which it hands hooks to.
install: build
	install -D -m 0755 $(BIN) $(DESTDIR)/usr/local/bin/gpuprof
	install -D -m 0755 $(HOOKBIN) $(DESTDIR)/usr/local/lib/gpuprof/gpuprof-hook
	install -D -m 0755 $(FULLHOOKBIN) $(DESTDIR)/usr/local/lib/gpuprof/gpuprof-hook-full
	rm -f $(DESTDIR)/usr/local/sbin/gpuprof
	$(BIN) gendocs --man $(DESTDIR)/usr/local/share/man
	install -D -m 0755 contrib/slurm/hook.sh $(DESTDIR)/etc/slurm/prolog.d/50-gpuprof
	install -D -m 0755 contrib/slurm/hook.sh $(DESTDIR)/etc/slurm/epilog.d/50-gpuprof
	install -D -m 0755 contrib/slurm/hook.sh $(DESTDIR)/etc/slurm/gpuprof-jobcomp.sh
	install -D -m 0755 contrib/slurm/mailprog.sh $(DESTDIR)/etc/slurm/gpuprof-mailprog.sh
	install -D -m 0644 contrib/systemd/gpuprof-agent.service $(DESTDIR)/etc/systemd/system/gpuprof-agent.service
	install -D -m 0644 contrib/systemd/gpuprof-serve.service $(DESTDIR)/etc/systemd/system/gpuprof-serve.service
	install -D -m 0644 contrib/systemd/gpuprof-import.service $(DESTDIR)/etc/systemd/system/gpuprof-import.service
	install -D -m 0644 contrib/systemd/gpuprof-import.timer $(DESTDIR)/etc/systemd/system/gpuprof-import.timer
	install -D -m 0644 contrib/logrotate/gpuprof $(DESTDIR)/etc/logrotate.d/gpuprof
	install -d -m 0750 $(DESTDIR)/var/log/gpuprof
	test -e $(DESTDIR)/etc/gpuprof/gpuprof.toml || install -D -m 0644 contrib/slurm/gpuprof.toml.example $(DESTDIR)/etc/gpuprof/gpuprof.toml

# The Debian and RPM packages in dist/ (packaging/nfpm.yaml, built with
# nfpm's library by packaging/, a module of its own): the binary in
# /usr/bin (every user's command; the units and wrappers run it too), hook
# wrappers, gpuprof-hook (the thin hook) and gpuprof-hook-full in /usr/lib/gpuprof, systemd units, logrotate,
# /etc/gpuprof/gpuprof.toml as a conffile, examples, a man page per command
# (section 1 for users' commands, 8 for daemons and hooks) and the shell
# completions. SOURCE_DATE_EPOCH (the last commit's time) makes the man
# pages the same on every rebuild.
PKG_VERSION       ?= 0.1.0~git$(shell git log -1 --format=%cd.%h --date=format:%Y%m%d 2>/dev/null || echo 0)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
PKG               := build/pkg
package:
	rm -rf $(PKG) dist && mkdir -p $(PKG)/systemd $(PKG)/doc
	CGO_ENABLED=1 $(GO) build -trimpath -buildmode=pie -ldflags '$(LDFLAGS) -s -w' -o $(PKG)/gpuprof ./cmd/gpuprof
	# gpuprof-hook static and not PIE: without cgo, Go's PIE on linux/amd64
	# is still dynamically linked (ld.so runs first to relocate it), and
	# external linking to a static PIE needs cgo; the start-up is what the
	# binary is for (docs/benchmarks.md). It holds no C code.
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(PKG)/gpuprof-hook ./cmd/gpuprof-hook
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(PKG)/gpuprof-hook-full ./cmd/gpuprof-hook-full
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(PKG)/gpuprof gendocs --man $(PKG)/man --completions $(PKG)/completions
	gzip -9n $(PKG)/man/man1/*.1 $(PKG)/man/man8/*.8
	for u in contrib/systemd/*.service contrib/systemd/*.timer; do \
		sed 's|/usr/local/bin/gpuprof|/usr/bin/gpuprof|g' $$u > $(PKG)/systemd/$$(basename $$u); done
	install -m 0644 packaging/copyright $(PKG)/doc/copyright
	printf 'gpuprof (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- gpuprof developers <gpuprof@users.noreply.github.com>  %s\n' \
		'$(PKG_VERSION)' "$$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
		"$$(date -u -R -d @$(SOURCE_DATE_EPOCH))" | gzip -9n > $(PKG)/doc/changelog.gz
	cd packaging && $(GO) run . -config nfpm.yaml -out ../dist -version '$(PKG_VERSION)' deb rpm

# The package installed, checked and removed on this machine (root, a clean
# Debian: see scripts/package-check.sh); CI runs it after make test.
package-check:
	./scripts/package-check.sh

clean:
	rm -rf bin demo-out bench-out build dist
