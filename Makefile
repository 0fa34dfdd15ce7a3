# callpin: `make test` and `make demo` work from a clean clone (Python 3.11 and a C compiler).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
XDIST ?= -n 2

.PHONY: test test-c test-python demo bench sanitize reliability lint typecheck clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The C extension must build here: CALLPIN_BUILD_SPEEDUPS=1 turns a failed build
# into an error instead of a silent fallback to the pure-Python codec.
$(STAMP): $(PY) pyproject.toml setup.py $(wildcard src/callpin/_speedups.c)
	CALLPIN_BUILD_SPEEDUPS=1 $(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: test-c test-python

test-c: $(STAMP)
	$(PY) -c "import callpin, sys; print('callpin implementation:', callpin.IMPLEMENTATION); sys.exit(0 if callpin.IMPLEMENTATION == 'c' or not __import__('os').path.exists('src/callpin/_speedups.c') else 1)"
	$(PY) -m pytest $(XDIST) -q $(PYTEST_ARGS)

test-python: $(STAMP)
	CALLPIN_PURE_PYTHON=1 $(PY) -c "import callpin, sys; print('callpin implementation:', callpin.IMPLEMENTATION); sys.exit(callpin.IMPLEMENTATION != 'python')"
	CALLPIN_PURE_PYTHON=1 $(PY) -m pytest $(XDIST) -q $(PYTEST_ARGS)

demo: $(STAMP)
	$(VENV)/bin/callpin demo

bench: $(STAMP)
	$(PY) benchmarks/run.py

lint: $(STAMP)
	$(PY) -m pip install --quiet ruff mypy
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build src/*.egg-info src/callpin/*.so
