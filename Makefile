# Every target builds its own virtual environment, so a fresh clone needs only python3.
# Chatting needs only the package: `make chat` installs that (CHAT). `make verify`
# adds Spark and matplotlib (VERIFIED); everything else - tests, benchmarks, docs,
# the protocol compiler - wants the development extras as well (STAMP).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CHAT   := $(VENV)/.chat
VERIFIED := $(VENV)/.verify
STAMP  := $(VENV)/.installed

.PHONY: chat verify test test-fast bench proto docs clean tools

$(CHAT): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(CHAT)

$(VERIFIED): $(CHAT)
	$(BIN)/pip install --quiet -e '.[verify]'
	touch $(VERIFIED)

$(STAMP): $(VERIFIED)
	$(BIN)/pip install --quiet -e '.[dev,verify,export]'
	touch $(STAMP)

# The end-to-end client test drives a real terminal; the test LAN needs iproute2
# and nftables (network namespaces, loss rules); Spark needs a Java runtime;
# the verify report's page is rendered in headless Chromium.
APT_INSTALL = [ "$$(id -u)" = 0 ] && { apt-get update -qq || true; } && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq
tools:
	@command -v tmux >/dev/null || { $(APT_INSTALL) tmux >/dev/null; } || echo "note: tmux missing, the terminal test will be skipped"
	@{ command -v ip >/dev/null && command -v nft >/dev/null; } || { $(APT_INSTALL) iproute2 nftables >/dev/null; } || echo "note: ip/nft missing, the LAN tests will be skipped"
	@command -v chromium >/dev/null || { $(APT_INSTALL) chromium >/dev/null; } || echo "note: chromium missing, the report rendering test will be skipped"
	@$(MAKE) -s $(WAKU_SDS) || echo "note: @waku/sds not installed, the interop tests will be skipped"

# The interop tests run the reference JavaScript SDS under node; npm installs
# it once into a cache outside git (tests/interop/harness.py looks there).
WAKU_SDS := .cache/interop/node_modules/@waku/sds/package.json
$(WAKU_SDS):
	@command -v npm >/dev/null || { echo "npm not found"; exit 1; }
	npm install --prefix .cache/interop --no-save --no-audit --no-fund --loglevel=error @waku/sds@0.0.8

chat: $(CHAT)
	$(BIN)/sds-chat $(ARGS)

# e.g. make verify ARGS='exports/ --html report.html'
verify: $(VERIFIED)
	$(BIN)/sds-chat verify $(ARGS)

test: $(STAMP) tools
	$(BIN)/python -m pytest -q --durations=25 $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m 'not slow' $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/sds_engine.py
	$(BIN)/python benchmarks/sim_curves.py
	$(BIN)/python benchmarks/store_step.py
	$(BIN)/python benchmarks/tui_history.py
	$(BIN)/python benchmarks/verify.py
	$(BIN)/python benchmarks/replication.py
	$(BIN)/python benchmarks/lan_discovery.py

# docs/ as a site in site/ (mkdocs.yml); --strict: a broken link or anchor fails
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=proto proto/sds.proto proto/mvds.proto

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
