"""The process boundaries are typed: requests and reports round-trip through
JSON, anything of another contract version or with unknown fields is refused
with a message naming it, and report.json's x2_version is the package's."""
import json
from importlib import metadata

import pytest

from x2.contracts import (CONTRACT_VERSION, EmitRequest, ReadOptions, ReadRequest, Report,
                          x2_version)
from x2.errors import X2Error

from conftest import run_cli


def test_requests_round_trip_through_json():
    read = ReadRequest("m.onnx", "ir", inputs=["x"], input_shapes={"x": [1, 3]},
                       options=ReadOptions(input_dtypes={"x": "int64"}, trust_code=True))
    assert ReadRequest.from_json(json.loads(json.dumps(read.to_json()))) == read
    emit = EmitRequest("ir", "out", "tf model m")
    emit.options.opset = 18
    assert EmitRequest.from_json(json.loads(json.dumps(emit.to_json()))) == emit


def test_unknown_fields_and_other_versions_are_refused():
    with pytest.raises(X2Error, match=r"read options: unknown fields \['trust_evrything'\]"):
        ReadRequest.from_json({"model": "m", "options": {"trust_evrything": True}})
    with pytest.raises(X2Error, match=rf"contract version 99, but this x2 .* reads version "
                                      rf"{CONTRACT_VERSION}"):
        EmitRequest.from_json({"ir": "ir", "out": "out", "version": 99})


def test_report_carries_the_package_version_and_is_checked_on_load(sample, tmp_path):
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", str(sample("mlp")),
                   "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    report = Report.load(out)
    assert report.x2_version == metadata.version("x2") == x2_version()
    assert report.version == CONTRACT_VERSION and report.ops_mapped > 0

    doc = json.loads((out / "report.json").read_text())
    doc["version"] = CONTRACT_VERSION + 1
    (out / "report.json").write_text(json.dumps(doc))
    proc = run_cli("check", "--from", "tf", "--to", "onnx", "--model", str(sample("mlp")),
                   "--converted", str(out))
    assert proc.returncode != 0
    assert f"contract version {CONTRACT_VERSION + 1}" in proc.stderr
    assert "Traceback" not in proc.stderr

    del doc["version"]  # written before reports had a version
    (out / "report.json").write_text(json.dumps(doc))
    with pytest.raises(X2Error, match="before reports had a contract version; convert again"):
        Report.load(out)
