"""Models with trained weights that ship inside packages on the registry,
checked on realistic inputs: PP-OCR's detector, direction classifier and
recognizer (rapidocr-onnxruntime, paddle2onnx exports), Google's Magika
file-type model, NudeNet's YOLOv8n detector and Silero's voice-activity
detector (ONNX exports and its TorchScript model).

`make install` downloads the wheels (pinned in PACKAGES) to .venv/models
(`python tools/zoo_models/packaged_models.py --download`: read, never
installed); `python tools/zoo_models/packaged_models.py NAME OUT` copies
one model out.
`inputs(NAME)` gives what the model sees in use: an image with text for OCR,
the bytes of a real file for Magika, a drawn scene for NudeNet, a voiced
signal for Silero. Only numpy and PIL here: no framework is imported."""
from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / ".venv" / "models"
# pip names and pinned versions (the Makefile downloads these).
PACKAGES = {"rapidocr-onnxruntime": "1.4.4", "magika": "1.0.3", "nudenet": "3.4.2",
            "silero-vad": "6.2.3"}

# name: (package, file inside its wheel, --from)
MODELS = {
    "ppocr_det": ("rapidocr-onnxruntime",
                  "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", "onnx"),
    "ppocr_cls": ("rapidocr-onnxruntime",
                  "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", "onnx"),
    "ppocr_rec": ("rapidocr-onnxruntime",
                  "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", "onnx"),
    "magika": ("magika", "magika/models/standard_v3_3/model.onnx", "onnx"),
    "nudenet_320n": ("nudenet", "nudenet/320n.onnx", "onnx"),
    "silero_vad": ("silero-vad", "silero_vad/data/silero_vad.onnx", "onnx"),
    "silero_vad_ifless": ("silero-vad", "silero_vad/data/silero_vad_op18_ifless.onnx", "onnx"),
    "silero_vad_frames": ("silero-vad", "silero_vad/data/silero_vad_16k_sequence.onnx", "onnx"),
    "silero_vad_jit": ("silero-vad", "silero_vad/data/silero_vad.jit", "torch"),
}
NAMES = list(MODELS)
# One Silero window: 512 samples at 16 kHz (the sequence model takes 576:
# 64 of context before each window).
WINDOW, CONTEXT, RATE = 512, 64, 16000


def file_name(name: str) -> str:
    return name + Path(MODELS[name][1]).suffix


def source(name: str) -> str:
    return MODELS[name][2]


def convert_args(name: str) -> dict:
    """x2 convert's arguments: Silero's 16 kHz path chosen with --input-value
    sr=16000 (its models branch on the rate; the TorchScript model's forward
    takes it as a Python int)."""
    if name == "silero_vad":
        return {"input_shapes": {"input": [1, WINDOW], "state": [2, 1, 128]},
                "options": {"input_values": {"sr": RATE}}}
    if name == "silero_vad_jit":
        return {"input_shapes": {"x": [1, WINDOW]}, "options": {"input_values": {"sr": RATE}}}
    return {}


def build(name: str, out: Path) -> None:
    package, member, _ = MODELS[name]
    stem = package.replace("-", "_")
    wheels = sorted(WHEELS.glob(f"{stem}-{PACKAGES[package]}-*.whl"))
    if not wheels:
        sys.exit(f"{stem}-{PACKAGES[package]} is not in {WHEELS}: run `make install`")
    with zipfile.ZipFile(wheels[-1]) as wheel:
        out.write_bytes(wheel.read(member))


def inputs(name: str) -> list[np.ndarray]:
    """What the model sees in use, in its input order."""
    if name.startswith("ppocr_"):
        height, width = {"ppocr_det": (96, 160), "ppocr_cls": (48, 192),
                         "ppocr_rec": (48, 320)}[name]
        return [text_image(height, width)]
    if name == "magika":
        return [file_features((ROOT / "x2" / "cli.py").read_bytes())]
    if name == "nudenet_320n":
        return [scene(320)]
    audio = voiced_signal(4 * WINDOW + CONTEXT)
    if name == "silero_vad_frames":
        frames = np.stack([audio[i * WINDOW:i * WINDOW + WINDOW + CONTEXT] for i in range(4)])
        zeros = np.zeros((1, 1, 128), np.float32)
        return [frames.astype(np.float32), zeros, zeros.copy()]
    state = np.zeros((2, 1, 128), np.float32)
    window = audio[None, :WINDOW].astype(np.float32)
    rate = np.array(RATE, np.int64)
    if name == "silero_vad_ifless":
        return [window, rate, state]
    if name == "silero_vad_jit":
        return [window]
    return [window, state]   # the rate is fixed at conversion


def text_image(height: int, width: int) -> np.ndarray:
    """Dark printed text on paper, normalised as PP-OCR expects ([-1, 1], NCHW)."""
    from PIL import Image, ImageDraw
    image = Image.new("RGB", (width, height), (235, 230, 220))
    draw = ImageDraw.Draw(image)
    for row, y in enumerate(range(4, max(height - 12, 5), 24)):
        draw.text((6, y), f"x2 converts {row} models 2026", fill=(20, 20, 30))
    pixels = np.asarray(image, np.float32).transpose(2, 0, 1) / 255
    return ((pixels[None] - 0.5) / 0.5).astype(np.float32)


def file_features(data: bytes, size: int = 1024, padding: int = 256) -> np.ndarray:
    """Magika's input: the first and last `size` bytes with surrounding
    whitespace stripped, padded with its padding token (int32 [1, 2 size])."""
    data = data.strip()
    head, tail = list(data[:size]), list(data[-size:])
    head += [padding] * (size - len(head))
    tail = [padding] * (size - len(tail)) + tail
    return np.array([head + tail], np.int32)


def scene(size: int) -> np.ndarray:
    """A drawn photo-like scene (sky, ground, figures in skin and cloth
    tones), RGB in [0, 1], NCHW."""
    from PIL import Image, ImageDraw
    image = Image.new("RGB", (size, size), (120, 170, 220))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, size * 2 // 3, size, size], fill=(90, 120, 60))
    for i, x in enumerate((size // 5, size // 2, 4 * size // 5)):
        skin = (224 - 30 * i, 172 - 25 * i, 140 - 20 * i)
        draw.ellipse([x - 18, size // 4, x + 18, size // 4 + 40], fill=skin)
        draw.rectangle([x - 28, size // 4 + 40, x + 28, size // 4 + 140], fill=skin)
        draw.rectangle([x - 30, size // 4 + 100, x + 30, size // 4 + 180],
                       fill=(40 + 60 * i, 40, 120 - 30 * i))
    return (np.asarray(image, np.float32).transpose(2, 0, 1)[None] / 255).astype(np.float32)


def voiced_signal(samples: int) -> np.ndarray:
    """A vowel-like sound at 16 kHz: a 140 Hz pitch with falling harmonics
    under a syllable envelope, plus a little noise."""
    t = np.arange(samples) / RATE
    pitch = 140 * (1 + 0.05 * np.sin(2 * np.pi * 3 * t))
    phase = 2 * np.pi * np.cumsum(pitch) / RATE
    voice = sum(np.sin(k * phase) / k for k in range(1, 12))
    envelope = 0.5 * (1 - np.cos(2 * np.pi * np.minimum(t / t[-1], 1)))
    noise = np.random.default_rng(0).standard_normal(samples) * 0.01
    return (0.3 * voice * envelope + noise).astype(np.float32)


def download() -> None:
    import subprocess
    WHEELS.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d",
                    str(WHEELS), *[f"{p}=={v}" for p, v in PACKAGES.items()]], check=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--download"]:
        download()
    else:
        build(sys.argv[1], Path(sys.argv[2]))
