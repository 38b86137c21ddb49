# Two commands do all set-up on a fresh machine: `make train` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Use the CPU build of torch kept on this machine's disk when there is one.
FIND_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)
CONFIG ?= configs/ppo_classic.yaml

.PHONY: install train test test-fast clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned exactly, so nothing pulls a multi-GB CUDA build
	$(PY) -m pip install --quiet $(FIND_LINKS) torch==2.13.0
	$(PY) -m pip install --quiet $(FIND_LINKS) -e ".[dev]"
	touch $@

train: install
	$(PY) scripts/train.py --config $(CONFIG)

test: install
	$(PY) -m pytest -n auto -q

# the inner loop: everything but the tests marked slow
test-fast: install
	$(PY) -m pytest -n auto -q -m "not slow"

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
