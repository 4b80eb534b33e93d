# -*- Python -*-
import os
import lit.formats

config.name = "MPT"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "Inputs",
                   "unit", "Conformance", "fixtures", "Consumer"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mpt_obj_root, "test")

config.substitutions.append(("%mpt_plugin", config.mpt_plugin))
# The source and build trees (the README examples run against them).
config.substitutions.append(("%mpt_src_root", os.path.dirname(config.test_source_root)))
config.substitutions.append(("%mpt_obj_root", config.mpt_obj_root))
# The include paths of a TableGen file that includes MLIR's and ours.
config.substitutions.append(("%tblgen_includes", " ".join(
    "-I " + d for d in config.mlir_include_dirs.split(";") +
    [os.path.join(os.path.dirname(config.test_source_root), "include")])))
# Tests that import ONNX say `REQUIRES: onnx` (MPT_ENABLE_ONNX).
if config.mpt_enable_onnx:
    config.available_features.add("onnx")
config.substitutions.append(("%fixtures", os.path.join(config.test_source_root, "fixtures", "models")))
config.environment["PATH"] = os.pathsep.join(
    [config.mpt_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
