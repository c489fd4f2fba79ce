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

$(STAMP): pyproject.toml constraints.txt
	@# Debian packages: Graphviz (renderings), Chromium (report and verification-page browser tests),
	@# Tesseract (the optional OCR backend). Installed only when missing.
	@missing=""; \
	command -v dot >/dev/null 2>&1 || missing="$$missing graphviz"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v tesseract >/dev/null 2>&1 || missing="$$missing tesseract-ocr tesseract-ocr-eng"; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@# pyproject.toml declares ranges; constraints.txt pins this machine's exact versions (torch first:
	@# it is the big one, and the pinned build lies on this machine's disk).
	$(BIN)/python -m pip install -q -c constraints.txt torch torchvision
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	touch $(STAMP)

demo: install
	@# Two made-up generators that output graphs, and two that output images (parsed first).
	@for gen in careful-gen sloppy-gen graphviz-render perturbed-render; do \
	  $(BIN)/sciflow score examples/predictions/$$gen --refs examples/references --out runs/demo/$$gen \
	    --cache-dir runs/demo/.cache || exit 1; done
	$(BIN)/sciflow summarize runs/demo/careful-gen runs/demo/sloppy-gen runs/demo/graphviz-render \
	  runs/demo/perturbed-render -o runs/demo/leaderboard.csv
	$(BIN)/sciflow report runs/demo/careful-gen runs/demo/sloppy-gen runs/demo/graphviz-render \
	  runs/demo/perturbed-render -o runs/demo/report.html

test: install-bench
	$(BIN)/python -m ruff check sciflow tests benchmarks examples
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python benchmarks/bench_graph_metric.py
	$(BIN)/python benchmarks/bench_levels.py
	$(BIN)/python benchmarks/bench_parse.py --n 200 --seed 7
	$(BIN)/python benchmarks/bench_parse.py --n 200 --seed 7 --config benchmarks/configs/detector.toml
	$(BIN)/python benchmarks/bench_detector.py --n 100
	$(BIN)/python benchmarks/bench_embedding.py
	$(BIN)/python benchmarks/bench_metric_validity.py
	$(BIN)/python benchmarks/bench_critic.py
	$(BIN)/python benchmarks/bench_throughput.py --n 500

# The browser-drawn synthetic styles (mermaid): Mermaid's own browser bundle, pinned, npm-installed
# into the git-ignored .cache/npm (sciflow.bench.synth.mermaid_render loads its dist/mermaid.min.js
# into the shared headless Chromium). Nothing is downloaded when the pinned version is there.
MERMAID_VERSION := 12.3.0
NPM_PREFIX := .cache/npm
.PHONY: install-bench
install-bench: install
	@command -v chromium >/dev/null 2>&1 || { SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }
	@command -v npm >/dev/null 2>&1 || { SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm >/dev/null; }
	@command -v npm >/dev/null 2>&1 || { echo "install-bench needs npm (Node.js 18 or newer)"; exit 1; }
	@if grep -qs '"version": "$(MERMAID_VERSION)"' $(NPM_PREFIX)/node_modules/mermaid/package.json \
	  && test -f $(NPM_PREFIX)/node_modules/mermaid/dist/mermaid.min.js; then \
	  echo "mermaid $(MERMAID_VERSION) already in $(NPM_PREFIX)"; \
	else \
	  PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix $(NPM_PREFIX) --no-audit --no-fund --loglevel=error \
	    mermaid@$(MERMAID_VERSION); \
	fi

clean:
	rm -rf $(VENV) runs .pytest_cache .hypothesis
