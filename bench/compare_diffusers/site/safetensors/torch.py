"""safetensors.torch's file functions in Python (the real package is Rust and
not packaged by Debian); the same file format."""

import json
import struct

import numpy as np
import torch


def _safetensors_header(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(length)), 8 + length


_NUMPY_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64,
                 "I64": np.int64, "I32": np.int32, "U8": np.uint8, "BOOL": np.bool_}


def load_file(path, device="cpu"):
    """safetensors.torch.load_file in Python (the real package is Rust)."""
    header, start = _safetensors_header(path)
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=start)
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        # numpy has no bfloat16: its bits travel as int16.
        bfloat16 = info["dtype"] == "BF16"
        numpy_dtype = np.int16 if bfloat16 else _NUMPY_DTYPES[info["dtype"]]
        tensor = torch.from_numpy(np.array(data[begin:end].view(numpy_dtype)))
        if bfloat16:
            tensor = tensor.view(torch.bfloat16)
        tensors[name] = tensor.reshape(info["shape"]).to(device)
    return tensors


def save_file(tensors, path, metadata=None):
    names = {v: k for k, v in _NUMPY_DTYPES.items()}
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, tensor in tensors.items():
        tensor = tensor.detach().contiguous().cpu()
        if tensor.dtype == torch.bfloat16:
            dtype, blob = "BF16", tensor.view(torch.int16).numpy().tobytes()
        else:
            dtype, blob = names[tensor.numpy().dtype.type], tensor.numpy().tobytes()
        header[name] = {"dtype": dtype,
                        "shape": list(tensor.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))
