"""The weight file names diffusers' pipeline loader imports from
transformers.utils (v4.43.4's values)."""

SAFE_WEIGHTS_NAME = "model.safetensors"
WEIGHTS_NAME = "pytorch_model.bin"
FLAX_WEIGHTS_NAME = "flax_model.msgpack"
