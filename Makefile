# callpin: `make test` and `make demo` work from a clean clone (Python 3.11 and a C compiler).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
RESULTS := test-results
XDIST ?= -n 2

.PHONY: test test-c test-python test-all browser demo bench realworld sanitize reliability lint typecheck clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The C extension must build here: CALLPIN_BUILD_SPEEDUPS=1 turns a failed build
# into an error instead of a silent fallback to the pure-Python codec.
$(STAMP): $(PY) pyproject.toml setup.py $(wildcard src/callpin/_speedups.c src/callpin/_speedups_diff.c)
	CALLPIN_BUILD_SPEEDUPS=1 $(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: browser test-c test-python

# The HTML report tests drive headless Chromium (Debian's package): found here, or installed
# when this runs as root with apt-get. Without it those tests skip; under CI that is an error.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/dev/null \
		|| { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends chromium >/dev/null; }; }; } \
		|| { echo "chromium is not installed and cannot be installed here: the HTML browser tests will skip"; \
		case "$${CI:-}" in ""|0|false|no|off) ;; *) exit 1;; esac; }

test-c: $(STAMP)
	$(PY) -c "import callpin, sys; print('callpin implementation:', callpin.IMPLEMENTATION); sys.exit(0 if callpin.IMPLEMENTATION == 'c' or not __import__('os').path.exists('src/callpin/_speedups.c') else 1)"
	$(PY) -m pytest $(XDIST) -q --junitxml=$(RESULTS)/default-c.xml $(PYTEST_ARGS)

test-python: $(STAMP)
	CALLPIN_PURE_PYTHON=1 $(PY) -c "import callpin, sys; print('callpin implementation:', callpin.IMPLEMENTATION); sys.exit(callpin.IMPLEMENTATION != 'python')"
	CALLPIN_PURE_PYTHON=1 $(PY) -m pytest $(XDIST) -q --junitxml=$(RESULTS)/default-python.xml $(PYTEST_ARGS)

# The whole suite, C and pure Python, on every supported interpreter found (python3.11,
# python3.12, python3.13 on PATH, else pyenv-installed; each other than the default gets
# its own .venv-3.X), then the slow checks on each: the wheel and the sdist built,
# installed in fresh environments outside the checkout and run (callpin --version,
# callpin demo), and the fixed vectors written alike by every interpreter. It says which
# versions it skipped and why, and ends with one table of the counts.
test-all: test
	$(PY) tests/matrix.py --default $(PY) --xdist "$(XDIST)"

# The demo's scratch project (baselines, actual logs, drift.html) is kept in demo-out/.
demo: $(STAMP)
	rm -rf demo-out
	$(VENV)/bin/callpin demo --workdir demo-out

bench: $(STAMP)
	$(PY) benchmarks/run.py

# Real third-party libraries from the package index, each pinned to exact versions in its
# own environment (.venv-realworld/NAME): callpin tried on them as a new user would. Not
# part of make test (it installs from the index); SCENARIOS="a b" picks some.
realworld:
	$(PYTHON) examples/realworld/run.py $(SCENARIOS)

# AddressSanitizer and UBSan over the C extension: a separate venv with a non-editable
# install (the sanitized build must not replace the .so that .venv uses), warnings as
# errors, the system allocator so ASan sees every PyMem buffer, and the codec,
# normalization, diff (with the C passes of a diff), hostile-argument and leak tests.
SANITIZE_VENV := .venv-sanitize
SANITIZE_CFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1 -Werror
SANITIZE_ENV := LD_PRELOAD=$$($(CC) -print-file-name=libasan.so) PYTHONMALLOC=malloc \
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1
SANITIZE_TESTS := tests/test_speedups.py tests/test_journal.py tests/test_recorder_spies.py tests/test_recorder.py \
	tests/test_codec_differential.py tests/test_codec.py \
	tests/test_vectors.py tests/test_normalize.py tests/test_diff.py \
	tests/test_diff_differential.py tests/test_speedups_diff.py tests/test_frame_keys.py \
	tests/reliability/test_hostile_arguments.py tests/reliability/test_leaks.py

sanitize:
	test -x $(SANITIZE_VENV)/bin/python || $(PYTHON) -m venv $(SANITIZE_VENV)
	$(SANITIZE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SANITIZE_VENV)/bin/python -m pip install --quiet '.[test]'
	CALLPIN_BUILD_SPEEDUPS=1 CALLPIN_CFLAGS="$(SANITIZE_CFLAGS)" $(SANITIZE_VENV)/bin/python -m pip install \
		--quiet --no-cache-dir --force-reinstall --no-deps .
	rm -rf build
	nm -D $(SANITIZE_VENV)/lib/python*/site-packages/callpin/_speedups*.so | grep -q __asan_init
	$(SANITIZE_ENV) $(SANITIZE_VENV)/bin/python -c "import callpin, sys; print('callpin implementation:', callpin.IMPLEMENTATION, callpin.__file__); sys.exit(callpin.IMPLEMENTATION != 'c')"
	$(SANITIZE_ENV) $(SANITIZE_VENV)/bin/python -m pytest $(XDIST) -q $(PYTEST_ARGS) $(SANITIZE_TESTS)

# The reliability suite at its long size (at least 100,000 fuzzed logs, 200 killed
# writers, 20 rounds of 16 threads), then its figures as one table.
FIGURES := reliability-figures.jsonl

reliability: $(STAMP)
	rm -f $(FIGURES)
	CALLPIN_RELIABILITY=long CALLPIN_FIGURES=$(CURDIR)/$(FIGURES) $(PY) -m pytest $(XDIST) -q \
		$(PYTEST_ARGS) tests/reliability; status=$$?; \
	$(PY) tests/reliability/table.py $(FIGURES) || status=1; exit $$status

lint: $(STAMP)
	$(PY) -m pip install --quiet ruff mypy
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/ruff format --check src tests
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .venv-3.* .venv-realworld $(SANITIZE_VENV) $(FIGURES) $(RESULTS) build dist src/*.egg-info src/callpin/*.so
