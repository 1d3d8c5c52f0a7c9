# Every target builds its own virtual environment, so a fresh clone needs only python3.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: chat test test-fast bench proto clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

chat: $(STAMP)
	$(BIN)/sds-chat $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m 'not slow' $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/sds_engine.py
	$(BIN)/python benchmarks/sim_curves.py
	$(BIN)/python benchmarks/store_step.py

proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=proto proto/sds.proto

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
