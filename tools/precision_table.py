"""Error of each --precision conversion against its fp32 source, and the
weight file sizes, per source model and target (issue 18's table):

    PYTHONPATH=. python tools/precision_table.py [WORK_DIR]

Three small models (Keras CNN sample, tests/torch_models.py:encoder, the
tests/onnx_models.py torch_cnn ONNX model) x 3 targets x 4 precisions, on
this machine's CPU; a run the CPU cannot do prints x2 check's reason."""
import json, os, subprocess, sys, shutil
from pathlib import Path
from x2.convert import convert
from x2.check.parity import check
from x2.errors import X2Error
ROOT = Path(__file__).resolve().parent.parent
WORK = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/x2-precision-table")
(WORK / "out").mkdir(parents=True, exist_ok=True)
onnx_cnn = str(WORK / "onnx_cnn.onnx")
if not os.path.exists(onnx_cnn):
    subprocess.run([sys.executable, str(ROOT / "tests/onnx_models.py"), "torch_cnn", onnx_cnn], check=True)
keras = str(WORK / "small_cnn")
if not os.path.exists(keras):
    subprocess.run([sys.executable, "-m", "x2.samples", "small_cnn", keras], check=True)
SOURCES = {
    "keras_cnn": dict(model=keras, source="tf"),
    "torch_encoder": dict(model=f"{ROOT}/tests/torch_models.py:encoder", source="torch",
                          input_shapes={"tokens": [2, 16]}, options={"input_dtypes": {"tokens": "int64"}}),
    "onnx_cnn": dict(model=onnx_cnn, source="onnx"),
}
def size(out):
    return sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file() and p.suffix in (".onnx", ".pt", ".pdparams", ".pdiparams"))
rows = []
for name, src in SOURCES.items():
    for target in ("onnx", "torch", "paddle"):
        for prec in ("fp32", "fp16", "bf16", "mixed"):
            out = str(WORK / "out" / f"{name}_{target}_{prec}")
            shutil.rmtree(out, ignore_errors=True)
            try:
                r = convert(src["model"], out, source=src["source"], target=target, input_shapes=src.get("input_shapes"),
                            options=src.get("options"), emit_options={"precision": prec})
                kept = len((r.target_details.get("precision") or {}).get("kept_fp32") or {})
                casts = (r.target_details.get("precision") or {}).get("casts")
            except X2Error as e:
                rows.append((name, target, prec, "convert error: " + e.message[:100], "", "", "")); continue
            try:
                res = check(src["model"], out, source=src["source"], target=target)
                err = "; ".join(f"{o['runner']} {o['max_rel']:.2e} {'pass' if o['passed'] else 'FAIL'}" for o in res["outputs"])
            except X2Error as e:
                err = "not run on CPU: " + e.message[:90]
            rows.append((name, target, prec, err, size(out), kept, casts))
            print(rows[-1], flush=True)
(WORK / "rows.json").write_text(json.dumps(rows))
