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
        array = data[begin:end].view(_NUMPY_DTYPES[info["dtype"]]).reshape(info["shape"])
        tensors[name] = torch.from_numpy(np.array(array)).to(device)
    return tensors


def save_file(tensors, path, metadata=None):
    names = {v: k for k, v in _NUMPY_DTYPES.items()}
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, tensor in tensors.items():
        blob = tensor.detach().contiguous().cpu().numpy().tobytes()
        header[name] = {"dtype": names[tensor.detach().cpu().numpy().dtype.type],
                        "shape": list(tensor.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))
