"""torch_opset9.onnx upgraded to opset 21 with onnx.version_converter.

The converter rewrites the old attribute-style ops into their input-style successors
(Upsample-9 -> Resize, Clip-6 attrs -> Clip inputs, Slice-1 attrs -> Slice inputs,
ReduceMean/Unsqueeze axes -> inputs, Pad-2 -> Pad with pads input) and adds Constant
nodes for the new inputs. Same weights and same outputs as torch_opset9.

(The other direction, down-converting the opset-13..21 models here to opset 9, fails in
onnx 1.22's version_converter: e.g. "No Adapter To Version $12 for Relu",
"No Adapter From Version $13 for Transpose", "No Previous Version of LayerNormalization
exists"; so the opset-9 model is exported directly by torch instead, see torch_opset9.py.)

Runs in the main environment, after gen/torch_opset9.py:
    python tests/exported/gen/vc_opset9_to_21.py
"""

import onnx
from _meta import out_path, write_meta
from onnx import version_converter

NAME = "vc_opset9_to_21"

src = onnx.load(out_path("torch_opset9.onnx"))
model = version_converter.convert_version(src, 21)
onnx.checker.check_model(model, full_check=True)
onnx.save(model, out_path(f"{NAME}.onnx"))

write_meta(
    NAME,
    exporter="onnx.version_converter.convert_version(torch_opset9.onnx, 21)",
    exporter_version="onnx " + onnx.__version__,
    framework="pytorch (via torch_opset9.onnx)",
    framework_version="see torch_opset9",
    features=[
        "opset 21 produced by version_converter",
        "Resize (from Upsample-9)",
        "Clip with min/max inputs",
        "Slice with inputs",
        "ReduceMean-18 axes input",
        "Unsqueeze-13 axes input",
        "Pad with pads input",
        "initializers also listed as graph inputs",
        "same outputs as torch_opset9",
    ],
    generator_env="main env: onnx",
)
print("wrote", out_path(f"{NAME}.onnx"))
