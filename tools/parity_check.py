"""Parity check, same engine as `x2 check`:

    python tools/parity_check.py --from tf --to paddle --model SAVED_MODEL --converted OUT_DIR
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from x2.cli import main  # noqa: E402

if __name__ == "__main__":
    main(["check", *sys.argv[1:]])
