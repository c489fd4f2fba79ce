# The two commands for a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export YOLO_OFFLINE := 1

.PHONY: install demo test lint bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@command -v dot >/dev/null 2>&1 || { \
	  echo "Installing Graphviz (Debian package)"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq graphviz >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq graphviz >/dev/null; fi; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.14.1 torchvision==0.29.1
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

demo: install
	$(BIN)/sciflow score examples/predictions/careful-gen --refs examples/references --out runs/demo/careful-gen
	$(BIN)/sciflow score examples/predictions/sloppy-gen --refs examples/references --out runs/demo/sloppy-gen
	$(BIN)/sciflow summarize runs/demo/careful-gen runs/demo/sloppy-gen -o runs/demo/leaderboard.csv

test: install
	$(BIN)/python -m ruff check sciflow tests benchmarks examples
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python benchmarks/bench_graph_metric.py

clean:
	rm -rf $(VENV) runs .pytest_cache .hypothesis
