"""Decodes OTLP profiles and pprof with the official definitions, not hprof-rs's code, for the tests.

OTLP: the `opentelemetry-proto` package from PyPI (its generated profiles_service_pb2). pprof: the vendored
profile.proto compiled at run time by grpcio-tools' protoc. Both print the same JSON shape:
{"resource": {k: v}, "scope": name, "profiles": [{"sample_type": [type, unit], "period_type": [..],
  "period": n, "time_nanos": n, "duration_nanos": n,
  "samples": [{"frames": [{"function", "system_name", "file", "line", "mapping"}], "values": [..], "attrs": {k: v}}]}]}
Used as a module by receiver.py, or run as `decode.py otlp|pprof FILE` (pprof may be gzipped).
"""

import gzip
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.environ.get("HPROF_PYOTEL", os.path.join(ROOT, "target", "pyotel")))

from opentelemetry.proto.collector.profiles.v1development import profiles_service_pb2  # noqa: E402

_pprof = None


def pprof_module():
    """profile_pb2 compiled from crates/hprof-format/proto/pprof/profile.proto by grpc_tools' protoc."""
    global _pprof
    if _pprof is None:
        from grpc_tools import protoc

        out = tempfile.mkdtemp(prefix="pprof-pb2-")
        proto_dir = os.path.join(ROOT, "crates", "hprof-format", "proto", "pprof")
        rc = protoc.main(["protoc", "-I" + proto_dir, "--python_out=" + out, os.path.join(proto_dir, "profile.proto")])
        if rc != 0:
            raise RuntimeError("protoc failed on profile.proto")
        sys.path.insert(0, out)
        import profile_pb2

        _pprof = profile_pb2
    return _pprof


def _any(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def otlp(data):
    req = profiles_service_pb2.ExportProfilesServiceRequest()
    req.ParseFromString(data)
    d = req.dictionary
    s = d.string_table
    out = []
    for rp in req.resource_profiles:
        resource = {kv.key: _any(kv.value) for kv in rp.resource.attributes}
        for sp in rp.scope_profiles:
            for p in sp.profiles:
                samples = []
                for smp in p.samples:
                    frames = []
                    for li in d.stack_table[smp.stack_index].location_indices:
                        loc = d.location_table[li]
                        mapping = s[d.mapping_table[loc.mapping_index].filename_strindex] if loc.mapping_index else ""
                        for line in loc.lines:
                            f = d.function_table[line.function_index]
                            frames.append({"function": s[f.name_strindex], "system_name": s[f.system_name_strindex],
                                           "file": s[f.filename_strindex], "line": line.line, "mapping": mapping})
                    attrs = {}
                    for ai in smp.attribute_indices:
                        a = d.attribute_table[ai]
                        attrs[s[a.key_strindex]] = _any(a.value)
                    samples.append({"frames": frames, "values": list(smp.values), "attrs": attrs})
                out.append({"resource": resource, "scope": sp.scope.name,
                            "sample_type": [s[p.sample_type.type_strindex], s[p.sample_type.unit_strindex]],
                            "period_type": [s[p.period_type.type_strindex], s[p.period_type.unit_strindex]],
                            "period": p.period, "time_nanos": p.time_unix_nano, "duration_nanos": p.duration_nano,
                            "samples": samples})
    return {"profiles": out}


def pprof(data):
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    pb = pprof_module().Profile()
    pb.ParseFromString(data)
    s = pb.string_table
    functions = {f.id: f for f in pb.function}
    locations = {loc.id: loc for loc in pb.location}
    mappings = {m.id: m for m in pb.mapping}
    samples = []
    for smp in pb.sample:
        frames = []
        for lid in smp.location_id:
            loc = locations[lid]
            m = mappings.get(loc.mapping_id)
            mapping = s[m.filename] if m and m.has_functions and m.has_line_numbers else ""
            for line in loc.line:
                f = functions[line.function_id]
                frames.append({"function": s[f.name], "system_name": s[f.system_name], "file": s[f.filename],
                               "line": line.line, "mapping": mapping})
        attrs = {s[lb.key]: (s[lb.str] if lb.str else lb.num) for lb in smp.label}
        samples.append({"frames": frames, "values": list(smp.value), "attrs": attrs})
    return {"profiles": [{"sample_types": [[s[t.type], s[t.unit]] for t in pb.sample_type],
                          "period_type": [s[pb.period_type.type], s[pb.period_type.unit]], "period": pb.period,
                          "time_nanos": pb.time_nanos, "duration_nanos": pb.duration_nanos, "samples": samples}]}


if __name__ == "__main__":
    fmt, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        raw = f.read()
    print(json.dumps(otlp(raw) if fmt == "otlp" else pprof(raw)))
