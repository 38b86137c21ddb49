# Two commands do all set-up on a fresh machine: `make train` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Use the CPU build of torch kept on this machine's disk when there is one.
FIND_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)
CONFIG ?= agents/training/configs/ppo_classic.yaml

.PHONY: install install-extras install-ray web browser train test test-fast clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned exactly, so nothing pulls a multi-GB CUDA build
	$(PY) -m pip install --quiet $(FIND_LINKS) torch==2.13.0
	$(PY) -m pip install --quiet $(FIND_LINKS) -e ".[dev]"
	touch $@

# Optional: OpenSpiel (the `openspiel` extra, one 16 MB wheel: jamb_env.openspiel), TorchRL and
# Tianshou (the `torchrl` and `tianshou` extras, about 15 s: docs/tools.md). CI (.ci/run)
# installs them through this target, so their tests run there.
install-extras: $(VENV)/.installed-extras

$(VENV)/.installed-extras: $(VENV)/.installed
	$(PY) -m pip install --quiet $(FIND_LINKS) -e ".[dev,openspiel,torchrl,tianshou]"
	touch $@

# Optional: Ray for jamb-evaluate --ray, jamb-tune --ray and jamb-train --engine rllib (the `ray`
# extra: Ray Tune and RLlib; docs/usage.md "Ray"), with the extras above. Its tests (about four
# minutes more on 2 cores: each starts a local Ray) run after `make install-ray`; CI leaves them
# out to stay within its 15 minutes. Nothing else needs it: the tests that do are skipped without it.
install-ray: $(VENV)/.installed-ray

$(VENV)/.installed-ray: $(VENV)/.installed-extras
	$(PY) -m pip install --quiet $(FIND_LINKS) -e ".[dev,ray,openspiel,torchrl,tianshou]"
	touch $@

# Jamb in the browser (jamb-web, docs/web.md): serves on http://127.0.0.1:8000/
# (WEB_ARGS="--port 8080 --agent runs/<run>" to change it).
WEB_ARGS ?=
web: install
	$(VENV)/bin/jamb-web $(WEB_ARGS)

# Best effort, never failing the build: Debian's headless Chromium and its driver for
# tests/apps/test_replay_page.py and tests/apps/test_web_browser.py (skipped without them), installed when absent and root.
browser:
	-@{ [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } || \
	  echo "note: no headless Chromium (apt-get install chromium chromium-driver); the browser test will be skipped"

train: install
	$(PY) scripts/train.py --config $(CONFIG)

test: install browser
	$(PY) -m pytest -n auto -q

# the inner loop: everything but the tests marked slow
test-fast: install browser
	$(PY) -m pytest -n auto -q -m "not slow"

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
