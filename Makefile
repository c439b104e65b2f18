PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv test lint demo bench faults clean busybox

venv: $(STAMP)

# the runtime closure is installed at the versions requirements.lock pins (the image's), so the
# tests judge what ships, and a dependency's new release cannot change a clean checkout's run
$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	sed -e '/--hash=/d' -e 's/ \\$$//' -e '/^#/d' requirements.lock > $(VENV)/constraints.txt
	$(BIN)/python -m pip install -q -e '.[dev,cloud]' -c $(VENV)/constraints.txt
	$(MAKE) -s busybox
	touch $(STAMP)

# the probe's tests run it under busybox sh too (many images' only shell): Debian's static build,
# unpacked into the venv, no root needed
busybox:
	test -x $(BIN)/busybox || ( tmp=$$(mktemp -d) && cd $$tmp && apt-get download -q busybox-static \
	  && dpkg-deb -x busybox-static_*.deb root && cp root/bin/busybox $(abspath $(BIN))/busybox; rm -rf $$tmp )

# the suite mostly waits (kubesim rollouts, probes, backoffs): 1,450 tests on 2 cores took 6 min 37 s
# on 4 workers, 5 min 17 s on 6, 5 min 8 s on 8; each test builds its own cluster on its own ports.
# TEST_JOBS=0 runs it serially.
TEST_JOBS ?= 6
test: venv
	$(BIN)/python -m pytest -q -n $(TEST_JOBS)

lint: venv
	$(BIN)/ruff check verify tests bench tools
	$(BIN)/mypy
	# each probe as it is sent: the shared input reader, then the probe
	for p in probe debug_probe; do cat verify/flow/probe/probe_input.sh verify/flow/probe/$$p.sh \
	  | $(BIN)/shellcheck -s sh - || exit 1; done
	# the docs site: a broken link or anchor, a missing page or snippet fails it
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir $(VENV)/site

demo: venv
	$(BIN)/python -m tests.support.demo

bench: venv
	$(BIN)/python -m compileall -q verify  # as installed: an editable install compiles nothing
	$(BIN)/python -m bench.run

faults: venv
	$(BIN)/python -m bench.faults

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
